// Float32 sums across the threads that share a row, from CUB's warp primitives: a (logical) warp
// reduces with cub::WarpReduce; a block of any size reduces each warp with cub::WarpReduce and
// then the warps' partial sums with one more. The block size is a launch-time choice (the row
// length sets it), which cub::BlockReduce, sized at compile time, would turn into one kernel per
// block size.
#pragma once

#include <cub/warp/warp_reduce.cuh>

namespace tileops::kernels::cuda {

// The sum over a logical warp of kThreads lanes, in every lane.
template <int kThreads>
__device__ __forceinline__ float group_sum(float value) {
  using WarpReduce = cub::WarpReduce<float, kThreads>;
  // Shuffle-based: the temp storage is empty, so one per kernel serves every logical warp.
  __shared__ typename WarpReduce::TempStorage storage;
  const float total = WarpReduce(storage).Sum(value);
  // The sum is valid in the logical warp's first lane; shuffles within the logical warp hand it on.
  const unsigned lane0 = (threadIdx.x / kThreads) * kThreads % 32;
  return __shfl_sync(0xffffffffu, total, static_cast<int>(lane0));
}

// Scratch of block_sum: the warps' partial sums and the result. A kernel calls block_sum any
// number of times with one BlockSumStorage; every thread of the block must call it.
struct BlockSumStorage {
  float partial[32];
  float total;
};

// The sum over the block (blockDim.x a multiple of 32), in every thread. Two barriers: the
// partials are complete before warp 0 reads them, and the total before anyone reads it. A later
// call writes the partials only after its own first barrier's predecessors, so no reuse races.
__device__ __forceinline__ float block_sum(float value, BlockSumStorage& s) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage storage;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const float warp_total = WarpReduce(storage).Sum(value);
  if (lane == 0) s.partial[warp] = warp_total;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x) / 32;
    const float total = WarpReduce(storage).Sum(lane < warps ? s.partial[lane] : 0.0f);
    if (lane == 0) s.total = total;
  }
  __syncthreads();
  return s.total;
}

}  // namespace tileops::kernels::cuda
