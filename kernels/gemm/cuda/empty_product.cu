#include <cuda_runtime_api.h>

#include "cuda/check.hpp"
#include "kernels/gemm/cuda/empty_product.hpp"

namespace tileops::kernels::cuda {
namespace {

// `Bits` is the element moved as raw bits: no arithmetic happens.
template <class Bits>
__global__ void fill_rows(Bits* out, const Bits* bias, std::int64_t n, std::int64_t total) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < total) out[i] = bias[i % n];
}

}  // namespace

void launch_empty_product(void* out, const void* bias, std::int64_t n, std::int64_t total,
                          std::size_t itemsize, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (bias == nullptr) {
    TILEOPS_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<std::size_t>(total) * itemsize, s));
    return;
  }
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((total + kThreads - 1) / kThreads);
  if (itemsize == 2) {
    fill_rows<<<blocks, kThreads, 0, s>>>(static_cast<std::uint16_t*>(out),
                                          static_cast<const std::uint16_t*>(bias), n, total);
  } else {
    fill_rows<<<blocks, kThreads, 0, s>>>(static_cast<std::uint32_t*>(out),
                                          static_cast<const std::uint32_t*>(bias), n, total);
  }
  TILEOPS_CUDA_CHECK_LAUNCH();
}

}  // namespace tileops::kernels::cuda
