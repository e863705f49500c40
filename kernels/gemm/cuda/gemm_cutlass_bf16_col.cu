// The CUTLASS GEMM candidate for bfloat16 with b the transposed view of [N, K]
// (gemm_cutlass_launch.hpp).
#include "kernels/gemm/cuda/gemm_cutlass.cuh"

namespace tileops::kernels::cuda {
template struct CutlassGemm<DType::kBFloat16, true>;
}  // namespace tileops::kernels::cuda
