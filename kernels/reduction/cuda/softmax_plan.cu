// Plans the softmax launches (softmax_launch.hpp): host code only.
#include <algorithm>

#include "kernels/reduction/cuda/softmax.cuh"  // kStridedColumns, kStridedSteps
#include "kernels/reduction/cuda/softmax_launch.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr std::int64_t kMaxGrid = 0x7fffffff;  // grid x; the kernels loop beyond it
constexpr int kOnlineThreads = 256;
// The shortest chunk worth a block of its own when a row is split.
constexpr std::int64_t kMinChunkElements = 4096;
constexpr std::int64_t kMaxChunks = 1024;
// The fewest steps of a strided axis worth a block of their own: a step per thread.
constexpr std::int64_t kMinStridedChunkSteps = reduction::kStridedSteps * 8;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

// Note [Softmax grid]
// The register path launches a block per row (or per 256 / lanes short rows), as the norm's block
// path does (Note [Norm grid] in kernels/norm/cuda/norm_launch.cu): blocks that exit are replaced
// at once, so loads of new rows overlap the stores of finished ones. The online path splits rows
// only when there are fewer rows than multiprocessors: into enough chunks for two blocks per
// multiprocessor, none shorter than kMinChunkElements, so that the partials stay negligible; the
// strided path splits its axis the same way when its column tiles are fewer than multiprocessors.
SoftmaxLaunch plan_softmax(SoftmaxPath path, DType dtype, const SoftmaxShape& shape, int sm_count) {
  SoftmaxLaunch l;
  if (shape.rows == 0 || shape.length == 0 || shape.inner == 0) return l;
  const std::int64_t sms = std::max(sm_count, 1);
  if (shape.inner > 1) {
    l.kernel = SoftmaxKernel::kStrided;
    l.threads = reduction::kStridedColumns * reduction::kStridedSteps;
    const std::int64_t tiles = shape.rows * ceil_div(shape.inner, reduction::kStridedColumns);
    std::int64_t chunks = 1;
    if (tiles < sms)
      chunks = std::clamp<std::int64_t>(
          std::min(ceil_div(2 * sms, tiles), ceil_div(shape.length, kMinStridedChunkSteps)), 1,
          kMaxChunks);
    l.chunk_accesses = ceil_div(shape.length, chunks);
    l.chunks = ceil_div(shape.length, l.chunk_accesses);
    if (l.chunks > 1) l.scratch_bytes = shape.rows * l.chunks * shape.inner * 8;
    l.blocks = std::min(tiles * l.chunks, kMaxGrid);
    return l;
  }
  const std::int64_t vector = softmax_vector_elements(dtype);
  l.vector = path != SoftmaxPath::kGeneral && shape.length % vector == 0;
  const bool registers = path == SoftmaxPath::kRegisters || path == SoftmaxPath::kGeneral;
  // Rows read one element at a time stay in registers only up to a warp's share (a block's
  // would spill: softmax_launch.cuh).
  const std::int64_t held =
      l.vector ? softmax_register_capacity(dtype) : 32 * kSoftmaxVectorsPerLane * vector;
  if (registers && shape.length <= held) {
    const std::int64_t per_lane = kSoftmaxVectorsPerLane * vector;
    l.kernel = SoftmaxKernel::kRegisters;
    if (shape.length <= 8 * per_lane) {
      l.lanes = 8;
      l.threads = 256;
    } else if (shape.length <= 32 * per_lane) {
      l.lanes = 32;
      l.threads = 256;
    } else {
      l.lanes = 0;
      l.threads = static_cast<int>(
          std::clamp<std::int64_t>(ceil_div(ceil_div(shape.length, per_lane), 32) * 32, 32, 1024));
    }
    const std::int64_t rows_per_block = l.lanes > 0 ? l.threads / l.lanes : 1;
    l.blocks = std::min(ceil_div(shape.rows, rows_per_block), kMaxGrid);
    // A block's row of 16 KB or more, or of a call of a few rows, is staged
    // in shared memory; four vectors per thread and pass (one when few rows leave the SMs idle),
    // no fewer than 128 threads (Note [Staged rows]).
    const std::int64_t row_bytes = shape.length * static_cast<std::int64_t>(dtype_size(dtype));
    if (l.lanes == 0 && l.vector && row_bytes <= kSoftmaxStagedMaxBytes && shape.rows <= kMaxGrid &&
        (row_bytes >= kSoftmaxStagedFromBytes || shape.rows < sms)) {
      const std::int64_t vectors = shape.length / vector;
      const std::int64_t per_thread = shape.rows < sms ? 1 : kSoftmaxVectorsPerLane;
      l.kernel = SoftmaxKernel::kStaged;
      l.threads = static_cast<int>(
          std::clamp<std::int64_t>(ceil_div(ceil_div(vectors, per_thread), 32) * 32, 128, 1024));
      l.shared_bytes = static_cast<int>(row_bytes);
    }
    return l;
  }
  l.kernel = SoftmaxKernel::kOnline;
  l.threads = kOnlineThreads;
  const std::int64_t accesses = shape.length / (l.vector ? vector : 1);
  std::int64_t chunks = 1;
  if (shape.rows < sms)
    chunks = std::clamp<std::int64_t>(
        std::min(ceil_div(2 * sms, shape.rows), ceil_div(shape.length, kMinChunkElements)), 1,
        kMaxChunks);
  l.chunk_accesses = ceil_div(accesses, chunks);
  l.chunks = ceil_div(accesses, l.chunk_accesses);
  if (l.chunks > 1) l.scratch_bytes = shape.rows * l.chunks * 8;  // a (max, sum) pair of floats
  l.blocks = std::min(shape.rows * l.chunks, kMaxGrid);
  return l;
}

}  // namespace tileops::kernels::cuda
