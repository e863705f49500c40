// The device side of strided copies on one CUDA device: dst <- src element by element, both
// described by a shape and element strides (rank at most kMaxCopyRank after merging axes).
#pragma once

#include <cstdint>

namespace tileops::cuda {

inline constexpr int kMaxCopyRank = 8;

struct StridedCopy {
  int rank = 0;
  int itemsize = 0;  // 1, 2, 4 or 8 bytes
  std::int64_t numel = 0;
  std::int64_t shape[kMaxCopyRank] = {};
  std::int64_t dst_strides[kMaxCopyRank] = {};  // elements
  std::int64_t src_strides[kMaxCopyRank] = {};
  void* dst = nullptr;
  const void* src = nullptr;
};

// Launches the copy on `stream` (a cudaStream_t) of the current device; checks the launch.
void launch_strided_copy(const StridedCopy& copy, void* stream);

}  // namespace tileops::cuda
