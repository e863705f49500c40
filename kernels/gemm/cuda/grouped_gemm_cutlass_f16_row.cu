// The CUTLASS grouped GEMM for float16 with w row-major [E, K, N]
// (grouped_gemm_cutlass_launch.hpp).
#include "kernels/gemm/cuda/grouped_gemm_cutlass.cuh"

namespace tileops::kernels::cuda {
template struct CutlassGroupedGemm<DType::kFloat16, false>;
}  // namespace tileops::kernels::cuda
