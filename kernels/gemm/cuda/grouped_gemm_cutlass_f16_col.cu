// The CUTLASS grouped GEMM for float16 with w the transposed view of [E, N, K]
// (grouped_gemm_cutlass_launch.hpp).
#include "kernels/gemm/cuda/grouped_gemm_cutlass.cuh"

namespace tileops::kernels::cuda {
template struct CutlassGroupedGemm<DType::kFloat16, true>;
}  // namespace tileops::kernels::cuda
