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

// A pair of sums reduced together (LayerNorm's sum of x and of x^2, Note [LayerNorm in one
// reduction] in kernels/norm/cuda/norm.cuh): .x and .y are summed apart, with the shuffles of both
// in flight at once, so a pair costs about what one sum costs.
__device__ __forceinline__ float sum_of(float a, float b) { return a + b; }
__device__ __forceinline__ float2 sum_of(float2 a, float2 b) { return {a.x + b.x, a.y + b.y}; }

// The sum over a logical warp of kThreads lanes, of each member of a pair, in every lane.
template <int kThreads>
__device__ __forceinline__ float2 group_sum(float2 value) {
  return {group_sum<kThreads>(value.x), group_sum<kThreads>(value.y)};
}

// The sum over the hardware warp, valid in lane 0.
__device__ __forceinline__ float warp_sum(float value) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage storage;
  return WarpReduce(storage).Sum(value);
}
__device__ __forceinline__ float2 warp_sum(float2 value) {
  return {warp_sum(value.x), warp_sum(value.y)};
}

// Scratch of block_sum: the warps' partial sums and the result. A kernel calls block_sum any
// number of times with one storage per value type; every thread of the block must call it.
template <class V>
struct BlockSumStorageOf {
  V partial[32];
  V total;
};
using BlockSumStorage = BlockSumStorageOf<float>;

// The sum over the block (blockDim.x a multiple of 32) of a float or a pair, in every thread. Two
// barriers: the partials are complete before warp 0 reads them, and the total before anyone reads
// it. A later call writes the partials only after its own first barrier's predecessors, so no
// reuse races.
template <class V>
__device__ __forceinline__ V block_sum(V value, BlockSumStorageOf<V>& s) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const V warp_total = warp_sum(value);
  if (lane == 0) s.partial[warp] = warp_total;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x) / 32;
    const V total = warp_sum(lane < warps ? s.partial[lane] : V{});
    if (lane == 0) s.total = total;
  }
  __syncthreads();
  return s.total;
}

}  // namespace tileops::kernels::cuda
