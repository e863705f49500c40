// Plans and launches the norm kernels (norm.cuh); norm_<op>.cu instantiate them, one file per op
// so that the three compile in parallel.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/norm/cuda/norm.cuh"  // NormParams
#include "kernels/norm/cuda/norm_instances.hpp"
#include "kernels/norm/cuda/norm_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr int kWarpBlockThreads = 256;
constexpr int kStreamThreads = 512;
constexpr int kGeneralThreads = 256;

const void* kernel_for(NormOp op, NormPath path, DType dtype, int lanes,
                       FewRows few_rows = FewRows::kNone) {
  switch (op) {
    case NormOp::kRMS:
      return rms_norm_kernel(path, dtype, lanes, few_rows);
    case NormOp::kLayer:
      return layer_norm_kernel(path, dtype, lanes, few_rows);
    case NormOp::kFusedAddRMS:
      return fused_add_rms_norm_kernel(path, dtype, lanes, few_rows);
  }
  return nullptr;
}

int round_up(std::int64_t value, int multiple) {
  return static_cast<int>((value + multiple - 1) / multiple * multiple);
}

// Rows a staged kernel (norm_staged.cuh) copies per block: x, the residual,
// and for the few-rows variant the weight and LayerNorm's bias.
int staged_rows(NormOp op, bool few_rows) {
  const int inputs = op == NormOp::kFusedAddRMS ? 2 : 1;
  const int weights = op == NormOp::kLayer ? 2 : 1;
  return inputs + (few_rows ? weights : 0);
}

// Lets `kernel` take `bytes` of dynamic shared memory on the current device (beyond the default
// 48 KB), once per entry when its launch is planned.
void allow_shared_bytes(const void* kernel, int bytes) {
  TILEOPS_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// Note [Few rows] in norm.cuh: FusedAddRMSNorm's rows of up to 2048 vectors in registers, one
// vector per thread up to 1024 vectors, else two; other rows staged in shared memory with the
// weights, one vector per thread up to 512 threads, when they fit.
void plan_few_rows(NormLaunch& launch, NormOp op, NormPath path, DType dtype,
                   std::int64_t smem_budget) {
  const std::int64_t n = launch.n;
  const std::int64_t vectors = n / vector_elements(dtype);
  if (op == NormOp::kFusedAddRMS && vectors <= kNormFewRowsVectors) {
    const bool one = vectors <= kNormFewRowsVectors / 2;
    launch.few_rows_kernel =
        kernel_for(op, path, dtype, 0, one ? FewRows::kOneVector : FewRows::kTwoVectors);
    launch.few_rows_threads = std::max(round_up(one ? vectors : (vectors + 1) / 2, 32), 32);
    return;
  }
  const int bytes = static_cast<int>(n * dtype_size(dtype)) * staged_rows(op, true);
  if (bytes > smem_budget) return;
  launch.few_rows_kernel = kernel_for(op, path, dtype, 0, FewRows::kStaged);
  launch.few_rows_threads = std::clamp(round_up(vectors, 32), 128, 512);
  launch.few_rows_shared_bytes = bytes;
  allow_shared_bytes(launch.few_rows_kernel, bytes);
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
    case NormPath::kShared:
      // Four vectors per thread and pass, as the block path holds, but no fewer than 256
      // threads: the passes over shared memory are each thread's serial chain (rows of 4096
      // 16-bit elements: 74-76% of the copy ceiling with 256 threads, 70% with 128).
      launch.threads = std::clamp(
          round_up((vectors + kNormVectorsPerLane - 1) / kNormVectorsPerLane, 32), 256, 1024);
      launch.shared_bytes = static_cast<int>(n * dtype_size(dtype)) * staged_rows(op, false);
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
  launch.kernel = kernel_for(op, path, dtype, lanes);
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
  if (path == NormPath::kBlock || path == NormPath::kShared)
    plan_few_rows(launch, op, path, dtype, smem_budget);
  if (launch.few_rows_kernel != nullptr) launch.few_rows_below = std::max(sm_count, 1);
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
  const bool few_rows = t.rows < launch.few_rows_below;
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  tileops::cuda::launch_dependent(
      few_rows ? launch.few_rows_kernel : launch.kernel, dim3(static_cast<unsigned>(blocks)),
      dim3(static_cast<unsigned>(few_rows ? launch.few_rows_threads : launch.threads)), args,
      static_cast<std::size_t>(few_rows ? launch.few_rows_shared_bytes : launch.shared_bytes),
      static_cast<cudaStream_t>(stream));
}

}  // namespace tileops::kernels::cuda
