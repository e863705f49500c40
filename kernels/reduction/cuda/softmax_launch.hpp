// The softmax kernels as the adapters see them (no CUDA header): a plan per call, made on the
// host from the shape and the device's multiprocessor count, and the launch.
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// The implementations of softmax and log_softmax (Note [Softmax kernels] in softmax.cuh).
enum class SoftmaxPath {
  kRegisters,  // the last axis, rows of up to softmax_register_capacity elements in registers
  kOnline,     // the last axis, any length: a running (max, sum) pass, then a write pass
  kStrided,    // another axis: coalesced across the inner columns
  kGeneral,    // anything, one element per access: misaligned pointers
};

// x viewed as [rows, length, inner], the op along the middle axis.
struct SoftmaxShape {
  std::int64_t rows = 0;
  std::int64_t length = 0;
  std::int64_t inner = 1;
};

// Elements of `dtype` in one 16-byte vector.
constexpr std::int64_t softmax_vector_elements(DType dtype) {
  return 16 / static_cast<std::int64_t>(dtype_size(dtype));
}
// Vectors (or their elements, one at a time) a lane of the register path holds, and the longest
// row it holds: a block of 1024 threads.
inline constexpr int kSoftmaxVectorsPerLane = 4;
constexpr std::int64_t softmax_register_capacity(DType dtype) {
  return 1024 * kSoftmaxVectorsPerLane * softmax_vector_elements(dtype);
}

// Rows the register path stages in shared memory instead (Note [Staged rows] in
// kernels/common/cuda/staged_rows.cuh): from 16 KB, or any row a block holds when there are fewer
// rows than multiprocessors. The longest is the register path's capacity, 64 KB.
inline constexpr std::int64_t kSoftmaxStagedFromBytes = 16 * 1024;
inline constexpr std::int64_t kSoftmaxStagedMaxBytes = 64 * 1024;

enum class SoftmaxKernel { kNone, kRegisters, kStaged, kOnline, kStrided };

struct SoftmaxLaunch {
  SoftmaxKernel kernel = SoftmaxKernel::kNone;  // kNone: an empty tensor, nothing to launch
  bool vector = false;                          // 16-byte accesses (else one element at a time)
  int lanes = 0;                                // the register path: per row; 0: a block per row
  int threads = 0;
  int shared_bytes = 0;  // dynamic shared memory per block (the staged row)
  std::int64_t blocks = 0;
  std::int64_t chunks = 1;          // chunks per row or strided axis (> 1: two kernels)
  std::int64_t chunk_accesses = 0;  // accesses (online) or steps (strided) per chunk
  std::int64_t scratch_bytes = 0;   // the chunks' (max, sum) partials
};

// Plans `path` for `shape` (the path serves it: its refusal said so) on a device of `sm_count`
// multiprocessors. A pointer alignment below 16 bytes is the general path's business; the vector
// paths still run lengths that are no multiple of a vector one element at a time.
SoftmaxLaunch plan_softmax(SoftmaxPath path, DType dtype, const SoftmaxShape& shape, int sm_count);

// Let the staged kernel of softmax (log_softmax) for `dtype` take kSoftmaxStagedMaxBytes of shared
// memory on the current device; once per entry, before its first launch.
void allow_softmax_staged(DType dtype);
void allow_log_softmax_staged(DType dtype);

// Launches on `stream` (a cudaStream_t) of the current device, asynchronously; `scratch` holds
// launch.scratch_bytes bytes in the stream's order.
void launch_softmax_fwd(const SoftmaxLaunch& launch, DType dtype, const SoftmaxShape& shape,
                        const void* x, void* out, void* scratch, void* stream);
void launch_log_softmax_fwd(const SoftmaxLaunch& launch, DType dtype, const SoftmaxShape& shape,
                            const void* x, void* out, void* scratch, void* stream);

}  // namespace tileops::kernels::cuda
