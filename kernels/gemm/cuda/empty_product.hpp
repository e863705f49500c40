// The product over an empty K, which cuBLASLt does not take (k = 0): out [rows, n] = the bias
// broadcast over the rows, or zeros. Free of CUDA headers (the adapters include it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tileops::kernels::cuda {

// `out` holds `total` contiguous elements of `itemsize` bytes (2 or 4), `bias` null or `n` of them;
// enqueued on `stream` (a cudaStream_t).
void launch_empty_product(void* out, const void* bias, std::int64_t n, std::int64_t total,
                          std::size_t itemsize, void* stream);

}  // namespace tileops::kernels::cuda
