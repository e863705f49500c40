// The binary elementwise kernels as the adapters see them (no CUDA header).
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cuda {

enum class BinaryOp { kAdd, kMul };

// out = a + alpha * b (kAdd) or a * b (kMul), launched on `stream` (a cudaStream_t) of the current
// device, which has `sm_count` multiprocessors. `vectorised`: a and b have out's shape and every
// pointer is 16-byte aligned; otherwise a and b broadcast to out's shape (rank at most 8).
// `alpha` is read as a float for float dtypes and as an integer for integer dtypes.
void launch_binary(BinaryOp op, bool vectorised, const Tensor& a, const Tensor& b, double alpha,
                   std::int64_t alpha_int, Tensor& out, int sm_count, void* stream);

inline constexpr int kMaxBroadcastRank = 8;

}  // namespace tileops::kernels::cuda
