// The sum, mean and amax kernels as the adapters see them (no CUDA header): a plan per call, made
// on the host from the shape, the reduced axes and the device's multiprocessor count, and the
// launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"

namespace tileops::kernels::cuda {

// Runs of adjacent kept or reduced axes, outermost first (Note [Reduction kernels] in
// reduce_axes.cuh): sizes and strides in elements of x.
inline constexpr int kMaxAxisGroups = 8;
struct AxisGroups {
  int count = 0;
  std::int64_t size[kMaxAxisGroups] = {};
  std::int64_t stride[kMaxAxisGroups] = {};
};

// Why a call of `rank` axes reducing those of `reduced_mask` has more runs of kept or reduced axes
// than the kernels decode, or nullopt. It reads only the call spec: axes of length 1, which the
// plan drops, can only merge runs.
std::optional<std::string> axis_groups_refusal(int rank, std::uint64_t reduced_mask);

enum class ReduceOp { kSum, kMean, kAmax };
enum class ReduceKernel {
  kNone,     // no output element
  kFill,     // no input element: every output is the reduction of nothing
  kRows,     // the innermost axes are reduced: contiguous runs per output
  kColumns,  // the innermost axes are kept: coalesced across adjacent outputs
  kHeld,     // rows held in a block's registers: the rows paths' trailing axes, or one long run's
             // chunks (chunks > 1)
};

struct ReduceLaunch {
  ReduceKernel kernel = ReduceKernel::kNone;
  bool vector = false;  // 16-byte accesses (else one element at a time)
  int lanes = 0;        // rows: lanes per output; 0: a block per output
  int threads = 0;
  std::int64_t blocks = 0;
  // Rows: the kept groups, and the reduced groups outside the innermost run. Columns: the kept
  // groups outside the innermost one, and every reduced group.
  AxisGroups kept;
  AxisGroups reduced;
  std::int64_t items = 0;     // rows: outputs; columns: the product of `kept`
  std::int64_t run = 0;       // rows: the contiguous reduced run; columns: the innermost kept width
  std::int64_t segments = 1;  // rows: the product of `reduced`
  std::int64_t count = 0;     // elements reduced into each output
  std::int64_t outputs = 0;
  std::int64_t chunks = 1;     // partial results per output (> 1: a second, finishing kernel)
  std::int64_t chunk_len = 0;  // rows: run elements per chunk; columns: reduced steps per chunk
  int finish_lanes = 32;       // chunks > 1, not columns: a warp (32) or a block (0) per output
  std::int64_t scratch_bytes = 0;
};

// Plans the reduction of x (of `shape`) over the axes `reduced` marks on a device of `sm_count`
// multiprocessors; `vector_allowed`: x's and out's pointers are 16-byte aligned.
ReduceLaunch plan_reduce(DType dtype, const Shape& shape, const std::vector<bool>& reduced,
                         bool vector_allowed, int sm_count);

// The rows paths' plan: a block per row holding it in registers (kHeld) when the reduced axes
// are the trailing ones, rows are whole 16-byte vectors within kHeldMaxVectors and there are rows
// enough not to want them split (Note [Held rows] in reduce_axes.cuh); otherwise plan_reduce's
// vector plan, so that a call the rows paths claim by its spec is served whatever its lengths.
ReduceLaunch plan_reduce_rows(DType dtype, const Shape& shape, const std::vector<bool>& reduced,
                              int sm_count);

// Launches on `stream` (a cudaStream_t) of the current device, asynchronously; `scratch` holds
// launch.scratch_bytes bytes in the stream's order. `out` is contiguous, the kept axes in order.
void launch_sum_fwd(const ReduceLaunch& launch, DType dtype, const void* x, void* out,
                    void* scratch, void* stream);
void launch_mean_fwd(const ReduceLaunch& launch, DType dtype, const void* x, void* out,
                     void* scratch, void* stream);
void launch_amax_fwd(const ReduceLaunch& launch, DType dtype, const void* x, void* out,
                     void* scratch, void* stream);

}  // namespace tileops::kernels::cuda
