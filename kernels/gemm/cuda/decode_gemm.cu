// The decode GEMM candidates (decode_gemm_launch.hpp; Note [Decode GEMM] in decode_gemm.cuh).
#include "cuda/dependent_launch.hpp"
#include "kernels/gemm/cuda/decode_gemm.cuh"

namespace tileops::kernels::cuda {
namespace {

// As a dependent kernel (Note [Dependent launch] in src/cuda/dependent_launch.hpp).
template <class T, int kTiles, int kUnroll>
void launch_dependent_shape(const DecodeGemmProblem& p, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((p.n + 8 * kTiles - 1) / (8 * kTiles));
  tileops::cuda::launch_dependent(p.m <= 8 ? decode_gemm_kernel<T, kTiles, kUnroll, false>
                                           : decode_gemm_kernel<T, kTiles, kUnroll, true>,
                                  dim3(blocks), dim3(decode_gemm::kThreads), 0, stream, p);
}

template <class T>
void launch_shape(DecodeGemmShape shape, const DecodeGemmProblem& p, cudaStream_t stream) {
  if (shape == DecodeGemmShape::kNarrow)
    launch_dependent_shape<T, 1, 4>(p, stream);
  else
    launch_dependent_shape<T, 2, 2>(p, stream);
}

}  // namespace

void launch_decode_gemm(DType dtype, DecodeGemmShape shape, const DecodeGemmProblem& p,
                        void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (dtype == DType::kFloat16)
    launch_shape<__half>(shape, p, s);
  else
    launch_shape<__nv_bfloat16>(shape, p, s);
}

}  // namespace tileops::kernels::cuda
