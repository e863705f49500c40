// Plans and launches the activation kernels (activation.cuh); activation_unary.cu and
// activation_gated.cu instantiate them.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/activation/cuda/activation.cuh"  // ActivationParams
#include "kernels/activation/cuda/activation_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The gated kernels' tiling (Note [Activation kernels]) with `p.unroll` packs per lane.
void plan_rows(ActivationParams& p, std::int64_t pack) {
  const std::int64_t packs = p.n / pack;
  const std::int64_t lanes_wanted = ceil_div(packs, p.unroll);
  int shift = 0;
  while ((std::int64_t{1} << shift) < lanes_wanted && (1 << shift) < kActivationThreads) ++shift;
  p.lane_shift = shift;
  const std::int64_t lanes = std::int64_t{1} << shift;
  p.chunks_per_row = ceil_div(packs, lanes * p.unroll);
  p.tiles = ceil_div(p.rows, kActivationThreads / lanes) * p.chunks_per_row;
}

}  // namespace

ActivationLaunch plan_activation(ActivationKind kind, bool gated, bool vector, DType dtype,
                                 int sm_count) {
  ActivationLaunch launch;
  launch.gated = gated;
  launch.vector = vector;
  launch.kernel = gated ? gated_activation_kernel(kind, vector, dtype)
                        : unary_activation_kernel(kind, vector, dtype);
  if (launch.kernel == nullptr)
    throw CheckError("activation (cuda): dtype " + std::string(dtype_name(dtype)) +
                     " is not float16, bfloat16 or float32");
  int per_sm = 0;
  TILEOPS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, launch.kernel, kActivationThreads, 0));
  if (per_sm <= 0)
    throw CudaError("activation (cuda): a block of " + std::to_string(kActivationThreads) +
                    " threads does not fit on a multiprocessor");
  launch.sm_count = std::max(sm_count, 1);
  return launch;
}

void launch_activation(const ActivationLaunch& launch, const Tensor& x, Tensor& out, void* stream) {
  const std::int64_t numel = out.numel();
  if (numel == 0) return;
  ActivationParams p;
  p.x = x.data_ptr();
  p.out = out.data_ptr();
  p.numel = numel;
  const auto per_vector = 16 / static_cast<std::int64_t>(out.itemsize());
  std::int64_t blocks = 0;
  // Note [Few blocks] in activation.cuh: a call that would give fewer blocks than the device has
  // multiprocessors takes one pack per thread instead, in more blocks.
  if (launch.gated) {
    p.n = out.shape()[out.dim() - 1];
    p.rows = numel / p.n;
    plan_rows(p, launch.vector ? per_vector : 1);
    if (p.tiles < launch.sm_count) {
      p.unroll = 1;
      plan_rows(p, launch.vector ? per_vector : 1);
    }
    blocks = p.tiles;
  } else if (launch.vector) {
    const std::int64_t vectors = ceil_div(numel, per_vector);
    blocks = ceil_div(vectors, std::int64_t{kActivationThreads} * kActivationUnroll);
    if (blocks < launch.sm_count) {
      p.unroll = 1;
      blocks = ceil_div(vectors, kActivationThreads);
    }
  } else {
    blocks = ceil_div(numel, kActivationThreads);
  }
  // One block per chunk (Note [Activation kernels]); the kernels loop past a grid's limit.
  blocks = std::clamp<std::int64_t>(blocks, 1, std::int64_t{0x7fffffff});
  void* args[] = {&p};
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  tileops::cuda::launch_dependent(launch.kernel, dim3(static_cast<unsigned>(blocks)),
                                  dim3(kActivationThreads), args, 0,
                                  static_cast<cudaStream_t>(stream));
}

}  // namespace tileops::kernels::cuda
