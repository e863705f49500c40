// The decode GEMM candidates (decode_gemm_launch.hpp; Note [Decode GEMM] in decode_gemm.cuh).
#include "cuda/check.hpp"
#include "kernels/gemm/cuda/decode_gemm.cuh"

namespace tileops::kernels::cuda {
namespace {

template <class T>
cudaError_t launch_shape(DecodeGemmShape shape, const DecodeGemmProblem& p, cudaStream_t stream) {
  return shape == DecodeGemmShape::kNarrow ? launch_decode_gemm_kernel<T, 1, 4>(p, stream)
                                           : launch_decode_gemm_kernel<T, 2, 2>(p, stream);
}

}  // namespace

void launch_decode_gemm(DType dtype, DecodeGemmShape shape, const DecodeGemmProblem& p,
                        void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  TILEOPS_CUDA_CHECK(dtype == DType::kFloat16 ? launch_shape<__half>(shape, p, s)
                                              : launch_shape<__nv_bfloat16>(shape, p, s));
}

}  // namespace tileops::kernels::cuda
