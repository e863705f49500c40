// Plans the sum, mean and amax launches (reduce_launch.hpp): host code only (nvcc cannot
// evaluate fmt's compile-time format strings, hence std::to_string).
#include <algorithm>
#include <array>
#include <string>

#include "kernels/reduction/cuda/reduce_axes.cuh"  // the kernels' constants
#include "kernels/reduction/cuda/reduce_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr std::int64_t kMaxGrid = 0x7fffffff;  // grid x; the kernels loop beyond it
constexpr std::int64_t kMaxSplits = 65535;     // grid y
constexpr int kThreads = 256;
// Outputs of up to this many elements take a warp each when there are many, else a block.
constexpr std::int64_t kWarpElements = 4096;
// The shortest chunk of a run worth a block of its own.
constexpr std::int64_t kMinChunkElements = 8192;
// The fewest reduced steps of a column split worth a block of its own: a load per thread.
constexpr std::int64_t kMinSplitSteps = reduction::kColumnSteps * 4;
// Blocks per SM that a few long rows are cut into, each chunk finished by a second kernel.
constexpr std::int64_t kSplitBlocksPerSm = 4;
// The column kernel's blocks an SM (its launch bounds): a split plan fills the device once with
// them (Note [Column splits] in reduce_axes.cuh).
constexpr std::int64_t kColumnBlocksPerSm = 2;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Group {
  std::int64_t size;
  std::int64_t stride;
};

// Up to 64 groups (axes), filled innermost first.
struct GroupList {
  std::array<Group, 64> items;
  std::size_t count = 0;
  bool empty() const { return count == 0; }
  std::size_t size() const { return count; }
  const Group& front() const { return items[0]; }
  Group& back() { return items[count - 1]; }
  void push_back(const Group& g) { items[count++] = g; }
  const Group& operator[](std::size_t i) const { return items[i]; }
};

void append(AxisGroups& groups, const Group& g) {
  if (groups.count == kMaxAxisGroups)
    throw CheckError("reduction (cuda): more than " + std::to_string(kMaxAxisGroups) +
                     " runs of kept or reduced axes");
  groups.size[groups.count] = g.size;
  groups.stride[groups.count] = g.stride;
  ++groups.count;
}

std::int64_t product(const AxisGroups& groups) {
  std::int64_t n = 1;
  for (int g = 0; g < groups.count; ++g) n *= groups.size[g];
  return n;
}

}  // namespace

std::optional<std::string> axis_groups_refusal(int rank, std::uint64_t reduced_mask) {
  if (rank > 64)
    return "inputs of " + std::to_string(rank) + " axes: the reduced-axis mask has 64 bits";
  int runs[2] = {0, 0};
  for (int a = 0; a < rank; ++a) {
    const bool is_reduced = (reduced_mask >> a & 1) != 0;
    if (a == 0 || is_reduced != ((reduced_mask >> (a - 1) & 1) != 0)) ++runs[is_reduced];
  }
  if (runs[0] > kMaxAxisGroups || runs[1] > kMaxAxisGroups)
    return std::to_string(runs[0]) + " runs of kept and " + std::to_string(runs[1]) +
           " of reduced axes; the kernels decode up to " + std::to_string(kMaxAxisGroups) + " each";
  return std::nullopt;
}

ReduceLaunch plan_reduce(DType dtype, const Shape& shape, const std::vector<bool>& reduced,
                         bool vector_allowed, int sm_count) {
  ReduceLaunch l;
  const std::int64_t sms = std::max(sm_count, 1);
  std::int64_t numel = 1;
  l.count = 1;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    numel *= shape[a];
    if (reduced[a]) l.count *= shape[a];
  }
  l.outputs = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (!reduced[a]) l.outputs *= shape[a];
  if (l.outputs == 0) return l;
  if (numel == 0) {
    l.kernel = ReduceKernel::kFill;
    return l;
  }

  // Groups innermost first (Note [Reduction kernels] in reduce_axes.cuh), in fixed storage: the
  // plan runs on every call and allocates nothing. The refusal caps the rank at 64.
  GroupList kept, red;
  bool innermost_reduced = false, have_previous = false, previous_reduced = false;
  std::int64_t stride = 1;
  for (std::size_t a = shape.size(); a-- > 0;) {
    const std::int64_t size = shape[a];
    if (size == 1) continue;
    const bool is_reduced = reduced[a];
    GroupList& groups = is_reduced ? red : kept;
    if (have_previous && previous_reduced == is_reduced) {
      groups.back().size *= size;
    } else {
      if (!have_previous) innermost_reduced = is_reduced;
      groups.push_back({size, stride});
    }
    have_previous = true;
    previous_reduced = is_reduced;
    stride *= size;
  }
  const std::int64_t vector = 16 / static_cast<std::int64_t>(dtype_size(dtype));

  if (innermost_reduced) {
    l.kernel = ReduceKernel::kRows;
    l.run = red.front().size;
    for (std::size_t g = kept.size(); g-- > 0;) append(l.kept, kept[g]);
    for (std::size_t g = red.size(); g-- > 1;) append(l.reduced, red[g]);
    l.items = product(l.kept);
    l.segments = product(l.reduced);
    l.vector = vector_allowed && l.run % vector == 0;
    l.chunk_len = l.run;
    // (A grid past 2^31 blocks, 2^45 float32 elements, would not launch: the rows kernel loops.)
    if (l.items == 1 && l.segments == 1 && l.vector && l.run >= 2 * kMinChunkElements &&
        ceil_div(l.run / vector, reduction::kHeldMaxVectors) <= kMaxGrid) {
      // One long contiguous run: chunks of the held rows kernel (Note [Held chunks]).
      const std::int64_t vectors = l.run / vector;
      l.kernel = ReduceKernel::kHeld;
      l.threads = static_cast<int>(
          std::min<std::int64_t>(reduction::kHeldMaxThreads,
                                 ceil_div(ceil_div(vectors, reduction::kHeldVectors), 32) * 32));
      l.chunk_len = static_cast<std::int64_t>(l.threads) * reduction::kHeldVectors * vector;
      l.chunks = ceil_div(l.run, l.chunk_len);
      // One chunk is a held row, which the kernel bounds by its length.
      if (l.chunks == 1) l.chunk_len = l.run;
      l.blocks = l.chunks;
      l.finish_lanes = 0;
      l.scratch_bytes = l.chunks > 1 ? l.chunks * 8 : 0;
      return l;
    }
    if (l.segments == 1 && l.items < 2 * sms && l.run >= 2 * kMinChunkElements) {
      const std::int64_t chunks =
          std::min(ceil_div(kSplitBlocksPerSm * sms, l.items), ceil_div(l.run, kMinChunkElements));
      // Chunks start on a vector boundary.
      l.chunk_len = ceil_div(ceil_div(l.run, chunks), vector) * vector;
      l.chunks = ceil_div(l.run, l.chunk_len);
    }
    l.threads = kThreads;
    // A warp per output when there are outputs enough to fill the device; otherwise (a decode's
    // few rows) a block each, whose loads all go out at once.
    l.lanes = l.chunks == 1 && l.count <= kWarpElements && l.items >= sms ? 32 : 0;
    const std::int64_t per_block = l.lanes > 0 ? kThreads / l.lanes : 1;
    l.blocks = std::min(ceil_div(l.items * l.chunks, per_block), kMaxGrid);
  } else {
    l.kernel = ReduceKernel::kColumns;
    if (kept.empty()) kept.push_back({1, 1});  // one element, or only axes of length 1
    l.run = kept.front().size;
    for (std::size_t g = kept.size(); g-- > 1;) append(l.kept, kept[g]);
    for (std::size_t g = red.size(); g-- > 0;) append(l.reduced, red[g]);
    l.items = product(l.kept);
    l.vector = vector_allowed && l.run % vector == 0;
    const std::int64_t accesses = l.run / (l.vector ? vector : 1);
    const std::int64_t blocks = l.items * ceil_div(accesses, reduction::kColumnAccesses);
    std::int64_t splits = 1;
    // Rounded down to fill the device once (Note [Column splits]).
    if (2 * blocks <= kColumnBlocksPerSm * sms && l.count >= 2 * kMinSplitSteps)
      splits = std::min(
          {kColumnBlocksPerSm * sms / blocks, ceil_div(l.count, kMinSplitSteps), kMaxSplits});
    l.chunk_len = ceil_div(l.count, splits);
    l.chunks = ceil_div(l.count, l.chunk_len);
    l.threads = reduction::kColumnAccesses * reduction::kColumnSteps;
    l.blocks = std::min(blocks, kMaxGrid);
  }
  // A warp finishes an output whose chunks it loads in one round, a block one of more.
  l.finish_lanes = l.chunks <= 32 * reduction::kReduceUnroll ? 32 : 0;
  if (l.chunks > 1) l.scratch_bytes = l.outputs * l.chunks * 8;  // an accumulator of <= 8 bytes
  return l;
}

ReduceLaunch plan_reduce_rows(DType dtype, const Shape& shape, const std::vector<bool>& reduced,
                              int sm_count) {
  ReduceLaunch l = plan_reduce(dtype, shape, reduced, true, sm_count);
  // The vector plan of the same call: one contiguous run per output (segments == 1), whole
  // vectors, not split into chunks; then rows start run elements apart, so 16-byte aligned too.
  if (l.kernel != ReduceKernel::kRows || !l.vector || l.segments != 1 || l.chunks != 1) return l;
  const std::int64_t vectors = l.run / (16 / static_cast<std::int64_t>(dtype_size(dtype)));
  if (vectors < reduction::kHeldMinVectors || vectors > reduction::kHeldMaxVectors ||
      l.items > kMaxGrid)
    return l;
  // The fewest warps that hold the row at kHeldVectors vectors per thread.
  const std::int64_t threads = ceil_div(ceil_div(vectors, reduction::kHeldVectors), 32) * 32;
  l.kernel = ReduceKernel::kHeld;
  l.threads = static_cast<int>(threads);
  l.lanes = 0;
  l.blocks = l.items;
  return l;
}

}  // namespace tileops::kernels::cuda
