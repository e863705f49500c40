// Plans and launches the binary elementwise kernels (binary.cuh); binary_add.cu and binary_mul.cu
// instantiate them.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/elementwise/cuda/binary.cuh"  // BinaryParams
#include "kernels/elementwise/cuda/binary_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

// The most blocks a grid's x dimension takes.
constexpr std::int64_t kMaxGridBlocks = 0x7fffffff;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The rows and general kernels' tiling: enough lanes per row for kBinaryRowsUnroll packs each, a
// power of two up to the block, so that short rows share a block and long ones split into chunks.
void plan_tiles(BinaryParams& p, std::int64_t pack) {
  const std::int64_t packs = p.layout.cols / pack;
  const std::int64_t lanes_wanted = ceil_div(packs, kBinaryRowsUnroll);
  int shift = 0;
  while ((std::int64_t{1} << shift) < lanes_wanted && (1 << shift) < kBinaryThreads) ++shift;
  p.lane_shift = shift;
  const std::int64_t lanes = std::int64_t{1} << shift;
  const std::int64_t groups = kBinaryThreads / lanes;
  p.chunks_per_row = ceil_div(packs, lanes * kBinaryRowsUnroll);
  p.tiles = ceil_div(p.layout.rows, groups) * p.chunks_per_row;
}

// Throws unless a block of `kernel` fits on a multiprocessor of the current device.
void require_resident(const void* kernel) {
  int per_sm = 0;
  TILEOPS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBinaryThreads, 0));
  if (per_sm <= 0)
    throw CudaError("binary (cuda): a block of " + std::to_string(kBinaryThreads) +
                    " threads does not fit on a multiprocessor");
}

}  // namespace

BinaryLaunch plan_binary(BinaryOp op, BinaryPath path, DType dtype) {
  BinaryLaunch launch;
  launch.path = path;
  launch.kernel = op == BinaryOp::kAdd ? add_kernel(path, dtype) : mul_kernel(path, dtype);
  if (launch.kernel == nullptr)
    throw CheckError("binary (cuda): dtype " + std::string(dtype_name(dtype)) +
                     " is not float16, bfloat16, float32, int32 or int64");
  require_resident(launch.kernel);
  if (path == BinaryPath::kRows)
    for (const bool row_is_b : {false, true}) {
      const void* kernel = op == BinaryOp::kAdd ? add_repeated_row_kernel(row_is_b, dtype)
                                                : mul_repeated_row_kernel(row_is_b, dtype);
      require_resident(kernel);
      launch.repeated_row[row_is_b ? 1 : 0] = kernel;
      const void* scalar = op == BinaryOp::kAdd ? add_row_scalar_kernel(row_is_b, dtype)
                                                : mul_row_scalar_kernel(row_is_b, dtype);
      require_resident(scalar);
      launch.row_scalar[row_is_b ? 1 : 0] = scalar;
    }
  return launch;
}

void launch_binary(const BinaryLaunch& launch, const Tensor& a, const Tensor& b, double alpha,
                   std::int64_t alpha_int, Tensor& out, void* stream) {
  const std::int64_t numel = out.numel();
  if (numel == 0) return;
  BinaryParams p;
  p.out = out.data_ptr();
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.numel = numel;
  p.alpha = static_cast<float>(alpha);
  p.alpha_int = alpha_int;
  std::int64_t blocks = 0;
  const void* kernel = launch.kernel;
  const auto per_vector = 16 / static_cast<std::int64_t>(out.itemsize());
  if (launch.path == BinaryPath::kVector) {
    blocks = ceil_div(ceil_div(numel, per_vector), std::int64_t{kBinaryThreads} * kBinaryUnroll);
  } else {
    // A rank-0 result is one element of rank 1.
    const Shape shape = out.dim() == 0 ? Shape{1} : out.shape();
    if (!binary_layout(a, b, shape, p.layout))
      throw OpNotAvailableError("binary (cuda): more than " + std::to_string(kMaxBinaryAxes) +
                                " axes remain after merging");
    const bool rows = launch.path == BinaryPath::kRows;
    const RowsChoice choice = rows ? rows_kernel(p.layout) : RowsChoice{};
    // The rows path's alignment makes a row a whole number of vectors.
    if (choice.kernel == RowsKernel::kRepeatedRow) {
      kernel = launch.repeated_row[choice.b ? 1 : 0];
      blocks = ceil_div(numel / per_vector, std::int64_t{kBinaryThreads} * kRepeatedRowUnroll);
    } else if (choice.kernel == RowsKernel::kRowScalar) {
      kernel = launch.row_scalar[choice.b ? 1 : 0];
      blocks = ceil_div(numel / per_vector, kBinaryThreads);
    } else {
      plan_tiles(p, rows ? per_vector : std::int64_t{1});
      blocks = p.tiles;
    }
  }
  // One block per chunk (Note [Binary kernels]); the kernels loop past a grid's limit.
  blocks = std::clamp<std::int64_t>(blocks, 1, kMaxGridBlocks);
  void* args[] = {&p};
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  tileops::cuda::launch_dependent(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kBinaryThreads),
                                  args, 0, static_cast<cudaStream_t>(stream));
}

}  // namespace tileops::kernels::cuda
