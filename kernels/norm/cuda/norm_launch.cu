// Instantiates the norm kernels (norm.cuh) and launches them.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "kernels/norm/cuda/norm.cuh"
#include "kernels/norm/cuda/norm_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

// Lanes per row of the warp path: 8 for rows of up to 8 * kNormVectorsPerLane vectors (Qwen's
// 128-element head norms: four rows per warp), else 32.
constexpr int kNarrowLanes = 8;
constexpr int kWarpBlockThreads = 256;
constexpr int kStreamThreads = 512;
constexpr int kGeneralThreads = 256;

template <NormKind K, class T>
const void* kernel_for(NormPath path, int lanes) {
  constexpr int kVpt = kNormVectorsPerLane;
  switch (path) {
    case NormPath::kWarp:
      return lanes == kNarrowLanes
                 ? reinterpret_cast<const void*>(&norm_rows_kernel<K, T, kNarrowLanes, kVpt>)
                 : reinterpret_cast<const void*>(&norm_rows_kernel<K, T, 32, kVpt>);
    case NormPath::kBlock:
      return reinterpret_cast<const void*>(&norm_rows_kernel<K, T, 0, kVpt>);
    case NormPath::kStreaming:
      return reinterpret_cast<const void*>(&norm_stream_kernel<K, T, Vec<T>::kSize>);
    case NormPath::kGeneral:
      return reinterpret_cast<const void*>(&norm_stream_kernel<K, T, 1>);
  }
  return nullptr;
}

template <class T>
const void* kernel_for(NormOp op, NormPath path, int lanes) {
  switch (op) {
    case NormOp::kRMS:
      return kernel_for<NormKind::kRMS, T>(path, lanes);
    case NormOp::kLayer:
      return kernel_for<NormKind::kLayer, T>(path, lanes);
    case NormOp::kFusedAddRMS:
      return kernel_for<NormKind::kFusedAddRMS, T>(path, lanes);
  }
  return nullptr;
}

const void* kernel_for(NormOp op, NormPath path, DType dtype, int lanes) {
  switch (dtype) {
    case DType::kFloat16:
      return kernel_for<__half>(op, path, lanes);
    case DType::kBFloat16:
      return kernel_for<__nv_bfloat16>(op, path, lanes);
    case DType::kFloat32:
      return kernel_for<float>(op, path, lanes);
    default:
      throw CheckError("norm (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16 or float32");
  }
}

int round_up(std::int64_t value, int multiple) {
  return static_cast<int>((value + multiple - 1) / multiple * multiple);
}

}  // namespace

NormLaunch plan_norm(NormOp op, NormPath path, DType dtype, std::int64_t n, int sm_count) {
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
    case NormPath::kBlock:
      launch.threads = std::clamp(
          round_up((vectors + kNormVectorsPerLane - 1) / kNormVectorsPerLane, 32), 32, 1024);
      break;
    case NormPath::kStreaming:
      launch.threads = kStreamThreads;
      break;
    case NormPath::kGeneral:
      launch.threads = std::clamp(round_up(n, 32), 32, kGeneralThreads);
      break;
  }
  launch.kernel = kernel_for(op, path, dtype, lanes);
  int per_sm = 0;
  TILEOPS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, launch.kernel, launch.threads, 0));
  if (per_sm <= 0)
    throw CudaError("norm (cuda): a block of " + std::to_string(launch.threads) +
                    " threads of this kernel does not fit on a multiprocessor");
  launch.max_blocks = per_sm * std::max(sm_count, 1);
  return launch;
}

// Note [Norm grid]
// The grid is sized to the device, not to the rows: every block is resident from the start and
// walks its rows, so the weight a block loads once serves all of them, and no block waits for a
// second wave. The rows are spread evenly: with W waves' worth of row groups, the grid has
// ceil(groups / W) blocks, each taking W groups or one fewer.
void launch_norm(const NormLaunch& launch, const NormTensors& t, void* stream) {
  const std::int64_t groups = (t.rows + launch.rows_per_block - 1) / launch.rows_per_block;
  const std::int64_t waves = (groups + launch.max_blocks - 1) / launch.max_blocks;
  const std::int64_t blocks = (groups + waves - 1) / waves;
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
  TILEOPS_CUDA_CHECK(cudaLaunchKernel(launch.kernel, dim3(static_cast<unsigned>(blocks)),
                                      dim3(static_cast<unsigned>(launch.threads)), args, 0,
                                      static_cast<cudaStream_t>(stream)));
  TILEOPS_CUDA_CHECK_LAUNCH();
}

}  // namespace tileops::kernels::cuda
