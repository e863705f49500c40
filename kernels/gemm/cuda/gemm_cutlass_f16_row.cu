// The CUTLASS GEMM candidate for float16 with b row-major [K, N] (gemm_cutlass_launch.hpp).
#include "kernels/gemm/cuda/gemm_cutlass.cuh"

namespace tileops::kernels::cuda {
template struct CutlassGemm<DType::kFloat16, false>;
}  // namespace tileops::kernels::cuda
