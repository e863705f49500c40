// The strided copy kernel: one thread per element (grid-stride), the element's coordinates
// decoded from its row-major index in 64 bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/strided_copy.hpp"

namespace tileops::cuda {
namespace {

template <class Word>
__global__ void strided_copy_kernel(StridedCopy c) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < c.numel; i += stride) {
    std::int64_t rest = i, dst = 0, src = 0;
    for (int axis = c.rank - 1; axis >= 0; --axis) {
      const std::int64_t index = rest % c.shape[axis];
      rest /= c.shape[axis];
      dst += index * c.dst_strides[axis];
      src += index * c.src_strides[axis];
    }
    static_cast<Word*>(c.dst)[dst] = static_cast<const Word*>(c.src)[src];
  }
}

}  // namespace

void launch_strided_copy(const StridedCopy& copy, void* stream) {
  constexpr int kThreads = 256;
  // Enough blocks to fill any device several times over; the grid-stride loop covers the rest.
  const std::int64_t blocks = std::min<std::int64_t>((copy.numel + kThreads - 1) / kThreads, 65536);
  auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(blocks));
  switch (copy.itemsize) {
    case 1:
      strided_copy_kernel<std::uint8_t><<<grid, kThreads, 0, s>>>(copy);
      break;
    case 2:
      strided_copy_kernel<std::uint16_t><<<grid, kThreads, 0, s>>>(copy);
      break;
    case 4:
      strided_copy_kernel<std::uint32_t><<<grid, kThreads, 0, s>>>(copy);
      break;
    default:
      strided_copy_kernel<std::uint64_t><<<grid, kThreads, 0, s>>>(copy);
      break;
  }
  TILEOPS_CUDA_CHECK_LAUNCH();
}

}  // namespace tileops::cuda
