// Combining values across the threads of a row: logical warps through butterfly shuffles (every
// lane ends with the result) and blocks through one shared-memory slot per warp. The monoid is a
// policy with `Acc identity()` and `Acc combine(Acc, Acc)`, so that sums, maxima and the
// (max, sum of exponentials) pairs of softmax share one skeleton. Framework-free.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace tileops::kernels::cuda::reduction {

struct SumMonoid {
  using Acc = float;
  __device__ static Acc identity() { return 0.0f; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// The maximum with NaN propagating (torch.amax): `a != a` tests for NaN and is false for integers.
template <class A>
struct MaxMonoid {
  using Acc = A;
  __device__ static Acc identity() {
    // std::numeric_limits is host code; the integers are int32 and int64.
    if constexpr (std::is_floating_point_v<A>) {
      return -INFINITY;
    } else if constexpr (sizeof(A) == 4) {
      return INT_MIN;
    } else {
      return LLONG_MIN;
    }
  }
  __device__ static Acc combine(Acc a, Acc b) { return (a > b || a != a) ? a : b; }
};

// A row's running maximum and the sum of exp(x - max) over the elements seen: combining two
// rescales the smaller side's sum to the larger maximum. A side that has seen nothing has max
// -inf and sum 0 and contributes nothing (no exp(-inf - -inf) = NaN).
struct MaxExpSum {
  float max;
  float sum;
};
struct SoftmaxMonoid {
  using Acc = MaxExpSum;
  __device__ static Acc identity() { return {-INFINITY, 0.0f}; }
  __device__ static Acc combine(Acc a, Acc b) {
    if (a.sum == 0.0f && a.max == -INFINITY) return b;
    if (b.sum == 0.0f && b.max == -INFINITY) return a;
    const float m = fmaxf(a.max, b.max);
    return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
  }
};

template <class A>
__device__ __forceinline__ A shuffle_xor(A v, int mask) {
  if constexpr (std::is_same_v<A, MaxExpSum>) {
    return {__shfl_xor_sync(0xffffffffu, v.max, mask), __shfl_xor_sync(0xffffffffu, v.sum, mask)};
  } else {
    return __shfl_xor_sync(0xffffffffu, v, mask);
  }
}

// The combination over a logical warp of kLanes (a power of two up to 32) lanes, in every lane.
// Every lane of the hardware warp must call it.
template <class M, int kLanes>
__device__ __forceinline__ typename M::Acc warp_all(typename M::Acc v) {
#pragma unroll
  for (int mask = kLanes / 2; mask > 0; mask /= 2) v = M::combine(v, shuffle_xor(v, mask));
  return v;
}

// Scratch of block_all: one partial per warp and the result.
template <class A>
struct BlockScratch {
  A partial[32];
  A total;
};

// The combination over the block (blockDim.x * blockDim.y a multiple of 32), in every thread;
// every thread must call it. Two barriers: the partials are complete before warp 0 reads them,
// and the total before anyone reads it; a later call writes a partial only after this call's
// second barrier, so one BlockScratch serves any number of calls.
template <class M>
__device__ __forceinline__ typename M::Acc block_all(typename M::Acc v,
                                                     BlockScratch<typename M::Acc>& s) {
  const int thread = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int warp = thread / 32;
  const int lane = thread % 32;
  v = warp_all<M, 32>(v);
  if (lane == 0) s.partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x * blockDim.y) / 32;
    v = warp_all<M, 32>(lane < warps ? s.partial[lane] : M::identity());
    if (lane == 0) s.total = v;
  }
  __syncthreads();
  return s.total;
}

// Note [Softmax statistics]
// Merging (max, sum) pairs with SoftmaxMonoid::combine makes a chain: each step's two expf wait
// for the step before's maximum. So the pairs are merged in two passes: the maximum over all of
// them (a chain of fmaxf), then the sum of each pair's sum rescaled to it, whose exponentials are
// independent. On the H200 this took 0.4 us off a block's reduction and 0.35 us off a cluster's
// exchange of 16 pairs for a row of 128256 (4.94 -> 4.16 us a call), and 0.36-0.44 us off the
// online path's llama3-lm-head calls (bench/results/2026-12-04-h200-softmax-statistics.md).
// fmaxf as in combine: a NaN in the row reaches the result through the sums (exp(NaN - max)); a
// part that saw nothing (max -inf, sum 0) adds 0.
__device__ __forceinline__ float rescaled_sum(MaxExpSum part, float max) {
  // Not max == -inf alone: a part whose NaN was followed by -inf has max -inf and sum NaN.
  return part.max == -INFINITY && part.sum == 0.0f ? 0.0f : part.sum * expf(part.max - max);
}

// The merge of `count` pairs, part(k) giving the k-th (Note [Softmax statistics]).
template <class Part>
__device__ __forceinline__ MaxExpSum merge_softmax_parts(int count, Part&& part) {
  float max = -INFINITY;
  for (int k = 0; k < count; ++k) max = fmaxf(max, part(k).max);
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += rescaled_sum(part(k), max);
  return {max, sum};
}

// The block's merge of one pair a thread, in every thread (Note [Softmax statistics]): two
// block_all, of the maxima and of the rescaled sums.
__device__ __forceinline__ MaxExpSum block_softmax_stats(MaxExpSum mine, BlockScratch<float>& s) {
  struct FMax {
    using Acc = float;
    __device__ static Acc identity() { return -INFINITY; }
    __device__ static Acc combine(Acc a, Acc b) { return fmaxf(a, b); }
  };
  const float max = block_all<FMax>(mine.max, s);
  return {max, block_all<SumMonoid>(rescaled_sum(mine, max), s)};
}

// kLanes > 0: a logical warp of kLanes lanes; 0: the whole block.
template <class M, int kLanes>
__device__ __forceinline__ typename M::Acc group_all(typename M::Acc v,
                                                     BlockScratch<typename M::Acc>& s) {
  if constexpr (kLanes > 0) {
    return warp_all<M, kLanes>(v);
  } else {
    return block_all<M>(v, s);
  }
}

// Lanes per row, this thread's lane, rows per block and this thread's row within the block for
// rows of kLanes lanes (0: a block per row). Blocks are one-dimensional.
template <int kLanes>
struct Lanes {
  __device__ static int size() { return kLanes > 0 ? kLanes : static_cast<int>(blockDim.x); }
  __device__ static int lane() {
    return kLanes > 0 ? static_cast<int>(threadIdx.x) % kLanes : static_cast<int>(threadIdx.x);
  }
  __device__ static int per_block() {
    return kLanes > 0 ? static_cast<int>(blockDim.x) / kLanes : 1;
  }
  __device__ static int index() { return kLanes > 0 ? static_cast<int>(threadIdx.x) / kLanes : 0; }
};

}  // namespace tileops::kernels::cuda::reduction
