// Plans and launches the norm kernels (norm.cuh); norm_<op>.cu instantiate them, one file per op
// so that the three compile in parallel.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/norm/cuda/norm.cuh"           // NormParams
#include "kernels/norm/cuda/norm_few_rows.cuh"  // kNormMaxClusterBlocks
#include "kernels/norm/cuda/norm_instances.hpp"
#include "kernels/norm/cuda/norm_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr int kWarpBlockThreads = 256;
constexpr int kStreamThreads = 512;
constexpr int kGeneralThreads = 256;

const void* kernel_for(NormOp op, NormPath path, DType dtype, int lanes, int few_rows_cluster = 0) {
  switch (op) {
    case NormOp::kRMS:
      return rms_norm_kernel(path, dtype, lanes, few_rows_cluster);
    case NormOp::kLayer:
      return layer_norm_kernel(path, dtype, lanes, few_rows_cluster);
    case NormOp::kFusedAddRMS:
      return fused_add_rms_norm_kernel(path, dtype, lanes, few_rows_cluster);
  }
  return nullptr;
}

NormFixedKernel fixed_kernel_for(NormOp op, DType dtype, std::int64_t n) {
  switch (op) {
    case NormOp::kRMS:
      return rms_norm_fixed_kernel(dtype, n);
    case NormOp::kLayer:
      return layer_norm_fixed_kernel(dtype, n);
    case NormOp::kFusedAddRMS:
      break;
  }
  return {};
}

int round_up(std::int64_t value, int multiple) {
  return static_cast<int>((value + multiple - 1) / multiple * multiple);
}

// Rows a staged kernel (norm_staged.cuh) copies per block: x, and the residual.
int staged_rows(NormOp op) { return op == NormOp::kFusedAddRMS ? 2 : 1; }

// The smallest power of two at least `value`.
int power_of_two_at_least(std::int64_t value) {
  int p = 1;
  while (p < value) p *= 2;
  return p;
}

// Lets `kernel` take `bytes` of dynamic shared memory on the current device (beyond the default
// 48 KB), once per entry when its launch is planned.
void allow_shared_bytes(const void* kernel, int bytes) {
  TILEOPS_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// Note [Few rows] in norm.cuh: LayerNorm's rows of up to 256 vectors in one block, the other
// ops' of up to 512; longer rows split over a cluster of blocks of about 128 vectors each, at most
// kNormMaxClusterBlocks blocks, never more than 1024 vectors a block. At rows of 512 vectors
// LayerNorm (in one reduction since Note [LayerNorm in one reduction]) took 1.60 us in one block
// and 1.54 us in a cluster of 4 in `tileops bench`; FusedAddRMSNorm, 0.08 us faster in clusters of
// 4 in the experiment, measured 1.57 us alone and 1.61 us in clusters of 4 there, so it stays
// alone (bench/results/2026-12-03-h200-layer-norm-one-reduction.md).
void plan_few_rows(NormLaunch& launch, NormOp op, NormPath path, DType dtype) {
  const std::int64_t vectors = launch.vectors;
  if (vectors > kNormFewRowsVectors) return;
  for (int k = 0; k < 4; ++k) launch.few_rows_kernels[k] = kernel_for(op, path, dtype, 0, 1 << k);
  launch.few_rows_min_cluster = power_of_two_at_least((vectors + 1023) / 1024);
  const std::int64_t one_block_vectors = op == NormOp::kLayer ? 256 : 512;
  launch.few_rows_cluster = vectors <= one_block_vectors
                                ? 1
                                : std::clamp(power_of_two_at_least((vectors + 127) / 128),
                                             launch.few_rows_min_cluster, kNormMaxClusterBlocks);
}

// The few-rows kernel's cluster for a call of `rows` rows: the planned one while rows * cluster
// blocks leave each block about four multiprocessors (at 32 rows of 4096 every cluster lost to one
// block per row), halved down to the least that holds the row.
int few_rows_cluster(const NormLaunch& launch, std::int64_t rows) {
  int cluster = launch.few_rows_cluster;
  while (cluster > launch.few_rows_min_cluster && rows * cluster * 4 > launch.sm_count)
    cluster /= 2;
  return cluster;
}

// Note [FusedAddRMSNorm's prefill rows]
// Calls of fewer rows than multiprocessors take the few-rows kernel. FusedAddRMSNorm's rows of 512
// to 1024 vectors (4096 and 8192 16-bit elements) take it up to 16 rows per multiprocessor as
// well, in blocks of one row (a thread per vector: the cluster shrinks to one block at these row
// counts): on the H200, bfloat16, [2048, 4096] 21.15 -> 19.76 us (74.7 -> 79.9% of the copy
// ceiling) and [2048, 8192] 38.1 -> 36.2 us against the block and staged kernels, while [2048,
// 16384], [16384, 8192] and [4096, 16384] lost with it (89.1 -> 76.6%, 94.8 -> 89.2%, 92.7 ->
// 78.3%), as did RMSNorm and LayerNorm at every prefill shape
// (bench/results/2026-12-03-h200-python-host-and-norm-layouts.md).
std::int64_t few_rows_below(NormOp op, const NormLaunch& launch) {
  if (op == NormOp::kFusedAddRMS && launch.vectors >= 512 && launch.vectors <= 1024)
    return 16 * static_cast<std::int64_t>(launch.sm_count) + 1;
  return launch.sm_count;
}

}  // namespace

NormLaunch plan_norm(NormOp op, NormPath path, DType dtype, std::int64_t n, int sm_count,
                     std::int64_t smem_budget) {
  NormLaunch launch;
  launch.n = n;
  const std::int64_t vectors = n / vector_elements(dtype);
  int lanes = 0;
  switch (path) {
    case NormPath::kWarp:
      lanes = vectors <= kNarrowLanes * kNormVectorsPerLane ? kNarrowLanes : 32;
      launch.threads = kWarpBlockThreads;
      launch.rows_per_block = kWarpBlockThreads / lanes;
      break;
    case NormPath::kFixed: {
      const NormFixedKernel fixed = fixed_kernel_for(op, dtype, n);
      std::copy(std::begin(fixed.kernels), std::end(fixed.kernels), launch.fixed_kernels);
      launch.kernel = fixed.kernels[1];
      launch.threads = fixed.threads;
      launch.persistent = false;
      launch.row_per_block = true;
      break;
    }
    case NormPath::kShared:
      // Four vectors per thread and pass, as the block path holds, but no fewer than 256
      // threads: the passes over shared memory are each thread's serial chain (rows of 4096
      // 16-bit elements: 74-76% of the copy ceiling with 256 threads, 70% with 128). Fewer,
      // longer-working threads (more blocks per SM where shared memory allows) lost everywhere:
      // 8 vectors per thread took LayerNorm [4096, 16384] from 83.1% to 77.8% and
      // FusedAddRMSNorm's from 92.8% to 90.6% (bench/results/2026-12-02-h200-row-prefetch.md).
      launch.threads = std::clamp(
          round_up((vectors + kNormVectorsPerLane - 1) / kNormVectorsPerLane, 32), 256, 1024);
      launch.shared_bytes = static_cast<int>(n * dtype_size(dtype)) * staged_rows(op);
      launch.persistent = false;
      launch.row_per_block = true;
      break;
    case NormPath::kBlock:
      launch.threads = std::clamp(
          round_up((vectors + kNormVectorsPerLane - 1) / kNormVectorsPerLane, 32), 32, 1024);
      launch.persistent = false;
      break;
    case NormPath::kStreaming:
      launch.threads = kStreamThreads;
      break;
    case NormPath::kGeneral:
      launch.threads = std::clamp(round_up(n, 32), 32, kGeneralThreads);
      break;
  }
  if (path != NormPath::kFixed) launch.kernel = kernel_for(op, path, dtype, lanes);
  if (launch.kernel == nullptr)
    throw CudaError("norm (cuda): no " + std::string(dtype_name(dtype)) +
                    " kernel of this path for rows of " + std::to_string(n) + " elements");
  if (launch.shared_bytes > smem_budget)
    throw CudaError("norm (cuda): rows of " + std::to_string(n) + " elements need " +
                    std::to_string(launch.shared_bytes) + " bytes of shared memory per block; " +
                    "the device has " + std::to_string(smem_budget));
  if (launch.shared_bytes > 0) allow_shared_bytes(launch.kernel, launch.shared_bytes);
  int per_sm = 0;
  TILEOPS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, launch.kernel, launch.threads, static_cast<std::size_t>(launch.shared_bytes)));
  if (per_sm <= 0)
    throw CudaError("norm (cuda): a block of " + std::to_string(launch.threads) +
                    " threads of this kernel does not fit on a multiprocessor");
  launch.max_blocks = per_sm * std::max(sm_count, 1);
  launch.sm_count = std::max(sm_count, 1);
  launch.vectors = vectors;
  if (path == NormPath::kBlock || path == NormPath::kShared || path == NormPath::kFixed)
    plan_few_rows(launch, op, path, dtype);
  if (launch.few_rows_kernels[0] != nullptr) launch.few_rows_below = few_rows_below(op, launch);
  return launch;
}

// Note [Norm grid]
// The warp and streaming paths size the grid to the device, not to the rows: every block is
// resident from the start and walks its rows, so the weight a block loads once serves all of
// them, and no block waits for a second wave. The rows are spread evenly: with W waves' worth of
// row groups, the grid has ceil(groups / W) blocks, each taking W groups or one fewer.
// The block and shared paths launch one block per row instead. Measured on the H200 (RMSNorm
// bfloat16, bench/experiments/norm_variants.cu, 2026-12-01): [16384, 8192] 95.2% of the copy
// ceiling against 86.3% persistent, [4096, 16384] 91.3% against 85.1%, [2048, 16384] 85.1% against
// 80.7%. A persistent block runs its rows in lockstep phases (load, barrier, store), so an SM's
// few blocks leave DRAM idle between them; short-lived blocks are replaced as each one exits, and
// the SMs mix loads of new rows with the stores of finished ones. Warp-path rows are too short
// for a block each to pay off.
void launch_norm(const NormLaunch& launch, const NormTensors& t, void* stream) {
  const std::int64_t groups = (t.rows + launch.rows_per_block - 1) / launch.rows_per_block;
  const std::int64_t waves =
      launch.persistent ? (groups + launch.max_blocks - 1) / launch.max_blocks : 1;
  // Grid x is limited to 2^31 - 1 blocks; beyond that the blocks walk rows as the persistent
  // grid's do.
  const std::int64_t blocks = std::min<std::int64_t>((groups + waves - 1) / waves, 0x7fffffff);
  // The staged kernel does not walk rows; its rows are at least 2 KB, so more rows than a grid
  // holds would be 4 TB.
  if (launch.row_per_block && t.rows > blocks)
    throw CheckError("norm (cuda): " + std::to_string(t.rows) + " rows exceed the " +
                     std::to_string(blocks) + " blocks a grid holds");
  NormParams params;
  params.x = t.x;
  params.residual = t.residual;
  params.weight = t.weight;
  params.bias = t.bias;
  params.out = t.out;
  params.rows = t.rows;
  params.n = launch.n;
  params.eps = t.eps;
  void* args[] = {&params};
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  if (t.rows < launch.few_rows_below) {
    const int cluster = few_rows_cluster(launch, t.rows);
    const std::int64_t slice = (launch.vectors + cluster - 1) / cluster;
    const int k = cluster == 1 ? 0 : cluster == 2 ? 1 : cluster == 4 ? 2 : 3;
    tileops::cuda::launch_dependent(
        launch.few_rows_kernels[k], dim3(static_cast<unsigned>(t.rows * cluster)),
        dim3(static_cast<unsigned>(round_up(slice, 32))), args, 0,
        static_cast<cudaStream_t>(stream), static_cast<unsigned>(cluster));
    return;
  }
  // The fixed path's kernel for the affine tensors given (Note [Fixed rows] in norm_fixed.cuh).
  const void* kernel =
      launch.fixed_kernels[1] != nullptr
          ? launch.fixed_kernels[(t.weight != nullptr ? 1 : 0) + (t.bias != nullptr ? 2 : 0)]
          : launch.kernel;
  if (kernel == nullptr)
    throw CheckError("norm (cuda): the fixed path has no kernel taking a bias for this op");
  tileops::cuda::launch_dependent(
      kernel, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(launch.threads)),
      args, static_cast<std::size_t>(launch.shared_bytes), static_cast<cudaStream_t>(stream));
}

}  // namespace tileops::kernels::cuda
