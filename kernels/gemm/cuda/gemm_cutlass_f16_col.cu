// The CUTLASS GEMM candidate for float16 with b the transposed view of [N, K]
// (gemm_cutlass_launch.hpp).
#include "kernels/gemm/cuda/gemm_cutlass.cuh"

namespace tileops::kernels::cuda {
template struct CutlassGemm<DType::kFloat16, true>;
}  // namespace tileops::kernels::cuda
