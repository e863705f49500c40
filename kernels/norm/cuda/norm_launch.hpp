// The norm kernels as the adapters see them (no CUDA header): a launch plan made once per entry,
// and a launch per call.
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

enum class NormOp { kRMS, kLayer, kFusedAddRMS };

// The implementations of one norm op (Note [Norm kernels] in norm.cuh).
enum class NormPath {
  kWarp,       // a logical warp of 8 or 32 lanes per row, the row in registers
  kFixed,      // a block per row, the row in registers, its length fixed at compile time
  kShared,     // a block per row, the row staged in shared memory (LayerNorm, FusedAddRMSNorm)
  kBlock,      // a block per row, the row in registers
  kStreaming,  // a block per row, the row read in passes (long rows)
  kGeneral,    // the streaming kernel one element at a time: any alignment, any length
};

// The longest row, in vectors, norm_few_rows_kernel holds: one vector in each of 1024 threads of
// each of a cluster's 8 blocks (more than the block and shared paths serve).
inline constexpr std::int64_t kNormFewRowsVectors = 8 * 1024;

// Elements of `dtype` in one 16-byte vector.
constexpr std::int64_t vector_elements(DType dtype) {
  return 16 / static_cast<std::int64_t>(dtype_size(dtype));
}
// Vectors a lane of the register paths holds.
inline constexpr int kNormVectorsPerLane = 4;
// The longest row, in vectors, a path holds in registers: a warp of 32 lanes, a block of 1024.
inline constexpr std::int64_t kNormWarpVectors = 32 * kNormVectorsPerLane;
inline constexpr std::int64_t kNormBlockVectors = 1024 * kNormVectorsPerLane;
// The rows the shared path stages, in bytes (Note [Staged rows]): longer than
// norm_shared_row_bytes_above (shorter ones are as fast in registers) and up to 32 KB (longer ones
// leave too few blocks per multiprocessor); the block path holds the others in registers.
inline constexpr std::int64_t kNormSharedRowBytes = 32 * 1024;
// 8 KB, and 16 KB for LayerNorm's float32 rows: on the H200 its register kernel normalises rows of
// 4096 float32 at 80.4% of the copy ceiling against the staged kernel's 73.9%, while on 16-bit rows
// of 16 KB and more the staged kernel stays 3-5 points ahead
// (bench/results/2026-12-03-h200-layer-norm-registers-vs-staged.md).
constexpr std::int64_t norm_shared_row_bytes_above(NormOp op, DType dtype) {
  return op == NormOp::kLayer && dtype == DType::kFloat32 ? 16 * 1024 : 8 * 1024;
}

// The rows the fixed path has kernels for (Note [Fixed rows] in norm_fixed.cuh): RMSNorm's and
// LayerNorm's float16 and bfloat16 rows of 4096, 8192 and 16384 elements.
constexpr bool norm_fixed_row(NormOp op, DType dtype, std::int64_t n) {
  return op != NormOp::kFusedAddRMS && dtype_size(dtype) == 2 &&
         (n == 4096 || n == 8192 || n == 16384);
}

// The fixed-length kernels of one row length and the threads of their block: one per combination
// of affine tensors, kernels[weighted + 2 * biased] (RMSNorm: the first two).
struct NormFixedKernel {
  const void* kernels[4] = {};
  int threads = 0;
};

// What an entry builds once, on its device (Note [Norm grid] in norm_launch.cu).
struct NormLaunch {
  const void* kernel = nullptr;  // the instantiation for (op, path, dtype, lanes per row)
  // The fixed path's kernels by affine tensors (NormFixedKernel::kernels); `kernel` is the
  // weighted one.
  const void* fixed_kernels[4] = {};
  int threads = 0;       // per block
  int shared_bytes = 0;  // dynamic shared memory per block (the staged rows)
  int rows_per_block = 1;
  int max_blocks = 0;          // blocks resident on the whole device at once
  bool persistent = true;      // the grid sized to the device (else one block per row group)
  bool row_per_block = false;  // the kernel serves one row per block and does not walk rows
  // The block and shared paths' kernels for calls of fewer than few_rows_below rows (Note [Few
  // rows] in norm.cuh), or none (few_rows_below 0); their rows split over clusters of
  // few_rows_cluster blocks, fewer for calls of many rows, never fewer than few_rows_min_cluster (a
  // block holds 1024 vectors).
  const void* few_rows_kernels[4] = {};  // clusters of 1, 2, 4 and 8 blocks
  int few_rows_cluster = 1;
  int few_rows_min_cluster = 1;
  std::int64_t vectors = 0;  // of a row
  int sm_count = 1;
  std::int64_t few_rows_below = 0;
  std::int64_t n = 0;
};
// Plans the launch of `path` for rows of `n` elements of `dtype` on the current device, which has
// `sm_count` multiprocessors and `smem_budget` bytes of opt-in shared memory per block. The path
// must serve the call (its refusal said so).
NormLaunch plan_norm(NormOp op, NormPath path, DType dtype, std::int64_t n, int sm_count,
                     std::int64_t smem_budget);

// The tensors of one call: device pointers to the dtype's elements; residual only for
// kFusedAddRMS, bias only for kLayer; weight and bias may be null.
struct NormTensors {
  const void* x = nullptr;
  void* residual = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* out = nullptr;
  std::int64_t rows = 0;
  float eps = 0.0f;
};
// Launches on `stream` (a cudaStream_t) of the current device, asynchronously; checks the launch.
void launch_norm(const NormLaunch& launch, const NormTensors& tensors, void* stream);

}  // namespace tileops::kernels::cuda
