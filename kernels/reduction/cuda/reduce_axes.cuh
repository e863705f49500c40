// The CUDA kernel templates of sum, mean and amax over any set of axes (manifest/reduction.yaml).
// Framework-free: plain pointers, sizes and the axis groups of reduce_launch.hpp;
// reduce_launch.cuh launches them.
//
// Note [Reduction kernels]
// The plan (reduce_plan.cu) drops axes of length 1 and merges neighbouring axes that are both
// kept or both reduced, as the CPU kernels do (Note [Reduction layout] in
// kernels/reduction/cpu/reduce_cpu.cpp), which leaves two shapes:
//   - rows (reduce_rows_kernel), the innermost group reduced: each output reduces `segments`
//     contiguous runs (one unless reduced axes are not adjacent, e.g. [4, 128, 4096] over dims
//     [0, 2]), read with 16-byte accesses, four in flight per thread, by a warp per output (up to
//     4096 elements) or a block per output. A few long outputs are cut into chunks, a block
//     each, whose partials a second kernel combines: two stages, no atomics and no host
//     synchronisation, the same bits on every run. One long aligned run (a reduction of every
//     element) is cut into the held rows kernel's chunks instead (Note [Held chunks]).
//   - held rows (reduce_held_rows_kernel, the rows paths only): the trailing axes reduced over
//     rows a block holds in registers, a block per row (Note [Held rows]).
//   - columns (reduce_columns_kernel), the innermost group kept: a block covers 32 accesses of
//     adjacent outputs (a warp reads 512 contiguous bytes per step) by 16 threads that split the
//     reduced steps, merged through shared memory; when the outputs are too narrow to fill the
//     device the reduced steps are also split across blocks (grid y) with a finishing kernel
//     (Note [Column splits]).
// Offsets of the kept and reduced groups are decoded per output, per segment or per step only
// when there are several groups; the common single group costs a multiplication. Accumulation is
// in float32 (integers in their own type for amax), rounded to T once; amax propagates NaN as
// torch.amax does; mean divides the float32 sum by the element count once. Offsets are 64-bit.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/reduction/cuda/combine.cuh"
#include "kernels/reduction/cuda/pack.cuh"
#include "kernels/reduction/cuda/reduce_launch.hpp"

namespace tileops::kernels::cuda::reduction {

// An accumulator policy: the monoid, `load` (an element to the accumulator) and `finish` (the
// total of `count` elements to T, the one rounding).
template <class T>
struct SumPolicy {
  using M = SumMonoid;
  static constexpr bool kPairwise = false;  // Note [Pairwise maximum]
  __device__ static float load(T v) { return to_float(v); }
  __device__ static T finish(float total, std::int64_t) { return from_float<T>(total); }
};

template <class T>
struct MeanPolicy : SumPolicy<T> {
  // Zero elements: 0 / 0 is NaN, as torch.mean gives.
  __device__ static T finish(float total, std::int64_t count) {
    return from_float<T>(total / static_cast<float>(count));
  }
};

// Note [Pairwise maximum]
// The maximum of float16 is taken in float16, two elements an instruction (__hmax2_nan: exact, and
// NaN-propagating as torch.amax is), across a thread's loaded vectors and then within the one
// left, and converted to float32 once. Converting each element first, as sum must to accumulate
// in float32, costs a conversion an element, and float16's conversion (unlike bfloat16's, a
// shift) issues at a fraction of the rate of the arithmetic around it: at fp8-per-token [2048,
// 4096] on the H200 the held-rows kernel took 6.42 us for float16 against 5.62 for bfloat16, and
// 5.39 pairwise. bfloat16 keeps the element-wise path: pairwise, it gained there (5.62 -> 5.39 us)
// and lost at [2048, 14336] (15.39 -> 16.05 us), in the same call, repeated
// (bench/results/2026-12-04-h200-rope-amax.md).
template <class T>
struct AmaxPolicy {
  static constexpr bool kInteger = std::is_integral_v<T>;
  static constexpr bool kPairwise = std::is_same_v<T, __half>;
  using M = MaxMonoid<std::conditional_t<kInteger, T, float>>;
  using Acc = typename M::Acc;
  using Pair = __half2;
  // Element-wise maximum of two packs (kPairwise types).
  template <int kN>
  __device__ static Pack<T, kN> max_pack(const Pack<T, kN>& a, const Pack<T, kN>& b) {
    Pack<T, kN> r;
#pragma unroll
    for (int e = 0; e < kN; e += 2) {
      const Pair m = __hmax2_nan(Pair(a.v[e], a.v[e + 1]), Pair(b.v[e], b.v[e + 1]));
      r.v[e] = m.x;
      r.v[e + 1] = m.y;
    }
    return r;
  }
  // The maximum of a pack's elements (kPairwise types; kN even).
  template <int kN>
  __device__ static Acc pack_max(const Pack<T, kN>& a) {
    Pair m(a.v[0], a.v[1]);
#pragma unroll
    for (int e = 2; e < kN; e += 2) m = __hmax2_nan(m, Pair(a.v[e], a.v[e + 1]));
    return M::combine(to_float(m.x), to_float(m.y));
  }
  __device__ static Acc load(T v) {
    if constexpr (kInteger) {
      return v;
    } else {
      return to_float(v);
    }
  }
  __device__ static T finish(Acc max, std::int64_t) {
    if constexpr (kInteger) {
      return max;
    } else {
      return from_float<T>(max);
    }
  }
};

struct ReduceParams {
  const void* x = nullptr;
  void* out = nullptr;
  void* partials = nullptr;
  AxisGroups kept;
  AxisGroups reduced;
  std::int64_t items = 0;
  std::int64_t run = 0;
  std::int64_t segments = 1;
  std::int64_t count = 0;
  std::int64_t chunks = 1;
  std::int64_t chunk_len = 0;
};

inline constexpr int kReduceUnroll = 4;
// The column kernel's block: accesses across adjacent outputs by threads splitting the steps.
inline constexpr int kColumnAccesses = 32;
inline constexpr int kColumnSteps = 16;
// Steps a column thread loads at once: 8 vectors fit the 64 registers of two blocks an SM as raw
// words (Pack::Raw); the offsets of several groups take more, so those kernels load 4.
inline constexpr int kColumnUnroll = 8;
// Partials a thread of the column finish loads at once.
inline constexpr int kFinishUnroll = 16;

// The offset in x of the multi-index of `groups` whose row-major rank is `flat`; with kSeveral
// false, `groups` holds at most one group (its stride zero when none), and no division is compiled.
template <bool kSeveral = true>
__device__ __forceinline__ std::int64_t offset_of(std::int64_t flat, const AxisGroups& groups) {
  if (!kSeveral || groups.count == 1) return flat * groups.stride[0];
  std::int64_t offset = 0;
  for (int g = groups.count - 1; g >= 0; --g) {
    offset += (flat % groups.size[g]) * groups.stride[g];
    flat /= groups.size[g];
  }
  return offset;
}

// `acc` combined with the elements of the packs v[u] that `loaded(u)` says were loaded: element by
// element, or for kPairwise policies pack by pack in T first (Note [Pairwise maximum]).
template <class Pol, class P, int kCount, class Loaded>
__device__ __forceinline__ typename Pol::M::Acc fold_packs(typename Pol::M::Acc acc,
                                                           const P (&v)[kCount], Loaded loaded) {
  using M = typename Pol::M;
  if constexpr (Pol::kPairwise && P::kVector) {
    P m = v[0];
    bool any = false;
#pragma unroll
    for (int u = 0; u < kCount; ++u) {
      if (!loaded(u)) continue;
      m = any ? Pol::max_pack(m, v[u]) : v[u];
      any = true;
    }
    if (any) acc = M::combine(acc, Pol::pack_max(m));
  } else {
#pragma unroll
    for (int u = 0; u < kCount; ++u) {
      if (!loaded(u)) continue;
#pragma unroll
      for (int e = 0; e < P::kSize; ++e) acc = M::combine(acc, Pol::load(v[u].v[e]));
    }
  }
  return acc;
}

// ---- Rows: a logical warp of kLanes lanes per (output, chunk), or a block (kLanes == 0). ----
template <class Pol, class T, int kN, int kLanes>
__global__ void __launch_bounds__(256) reduce_rows_kernel(ReduceParams p) {
  using M = typename Pol::M;
  using Acc = typename M::Acc;
  using P = Pack<T, kN>;
  __shared__ BlockScratch<Acc> scratch;
  const int lanes = Lanes<kLanes>::size();
  const int lane = Lanes<kLanes>::lane();
  const std::int64_t items = p.items * p.chunks;
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * Lanes<kLanes>::per_block();
  const std::int64_t step = static_cast<std::int64_t>(lanes) * kN;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Lanes<kLanes>::per_block();
       first < items; first += groups) {
    const std::int64_t item = first + Lanes<kLanes>::index();
    Acc acc = M::identity();
    if (item < items) {
      const std::int64_t begin = (item % p.chunks) * p.chunk_len;
      const std::int64_t end = min(p.run, begin + p.chunk_len);
      const T* base = static_cast<const T*>(p.x) + offset_of(item / p.chunks, p.kept);
      for (std::int64_t s = 0; s < p.segments; ++s) {
        const T* run = base + (p.reduced.count > 0 ? offset_of(s, p.reduced) : 0);
        for (std::int64_t i = begin + lane * kN; i < end; i += kReduceUnroll * step) {
          P v[kReduceUnroll];
#pragma unroll
          for (int u = 0; u < kReduceUnroll; ++u)
            if (i + u * step < end) v[u] = P::load_once(run + i + u * step);
          acc = fold_packs<Pol>(acc, v, [&](int u) { return i + u * step < end; });
        }
      }
    }
    acc = group_all<M, kLanes>(acc, scratch);
    if (item < items && lane == 0) {
      if (p.chunks == 1) {
        static_cast<T*>(p.out)[item] = Pol::finish(acc, p.count);
      } else {
        static_cast<Acc*>(p.partials)[item] = acc;
      }
    }
  }
}

// ---- Columns: blocks of kColumnAccesses x kColumnSteps threads; grid y splits the steps. ----
// Note [Column splits]
// Outputs too few to fill the device (Sum over dim 0 of [2048, 4096]: 16 tiles of 256 columns)
// have their reduced steps split across blocks. The plan rounds the splits down so that the
// blocks fill the device once at the two an SM of the launch bounds: a block past them waits for
// a whole block's time. A thread loads its kColumnUnroll steps at once as raw 16-byte words
// (Pack::Raw); a split writes its partials [split][output], coalesced, and
// reduce_finish_columns_kernel, a dependent launch, gives each output a thread that loads
// kFinishUnroll splits at once and adds them in split order. On the H200 (`tileops bench`,
// bench/results/2026-12-04-h200-reduction-column-tiles.md) dim 0 of [2048, 4096] went 14.09 ->
// 7.77 us: 8 threads a tile and 33 splits (4 blocks an SM, 1.3 waves) with a warp per output
// finishing -> 16 threads and 17 splits 12.57 -> 16 splits 8.82 -> 8 raw steps 7.77. Kernels of
// several kept or reduced groups decode offsets with 64-bit divisions; they load 4 steps at once
// and still spill a few registers (ptxas -v), which only those rare layouts pay.
// kSeveral: the kept or the reduced axes form several groups (else the offsets are products).
template <class Pol, class T, int kN, bool kSeveral>
__global__ void __launch_bounds__(kColumnAccesses* kColumnSteps, 2)
    reduce_columns_kernel(ReduceParams p) {
  using M = typename Pol::M;
  using Acc = typename M::Acc;
  using P = Pack<T, kN>;
  // A thread's kN sums at a stride of kN + 1 (kN > 1): the steps' stores and the merge's loads
  // fall in distinct banks.
  constexpr int kStride = kN > 1 ? kN + 1 : 1;
  constexpr int kColumns = kColumnAccesses * kN;  // outputs of a tile
  constexpr int kUnroll = kSeveral ? kColumnUnroll / 2 : kColumnUnroll;
  __shared__ Acc partial[kColumnSteps][kColumnAccesses * kStride];
  const std::int64_t width = p.run / kN;  // accesses across the innermost kept group
  const std::int64_t tiles = (width + kColumnAccesses - 1) / kColumnAccesses;
  const std::int64_t items = p.items * tiles;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int t = ty * kColumnAccesses + tx;
  const std::int64_t split = blockIdx.y;
  const std::int64_t begin = split * p.chunk_len;
  const std::int64_t end = min(p.count, begin + p.chunk_len);
  begin_dependent_kernel();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t first_access = (item % tiles) * kColumnAccesses;
    const std::int64_t access = first_access + tx;
    const bool active = access < width;
    const std::int64_t outer = item / tiles;
    const T* base = static_cast<const T*>(p.x) + offset_of<kSeveral>(outer, p.kept) +
                    (active ? access * kN : 0);
    Acc acc[kN];
#pragma unroll
    for (int e = 0; e < kN; ++e) acc[e] = M::identity();
    if (active) {
      for (std::int64_t r = begin + ty; r < end; r += kUnroll * kColumnSteps) {
        typename P::Raw v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t at = r + u * kColumnSteps;
          if (at < end) v[u] = P::load_raw_once(base + offset_of<kSeveral>(at, p.reduced));
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u * kColumnSteps >= end) continue;
          const P pack = P::from_raw(v[u]);
#pragma unroll
          for (int e = 0; e < kN; ++e) acc[e] = M::combine(acc[e], Pol::load(pack.v[e]));
        }
      }
    }
#pragma unroll
    for (int e = 0; e < kN; ++e) partial[ty][tx * kStride + e] = acc[e];
    __syncthreads();
    // Thread t merges output t of the tile over the steps, in step order.
    const std::int64_t column = first_access * kN + t;
    if (t < kColumns && column < p.run) {
      const int at = t / kN * kStride + t % kN;
      Acc total = partial[0][at];
#pragma unroll
      for (int k = 1; k < kColumnSteps; ++k) total = M::combine(total, partial[k][at]);
      const std::int64_t o = outer * p.run + column;
      if (p.chunks == 1) {
        static_cast<T*>(p.out)[o] = Pol::finish(total, p.count);
      } else {
        static_cast<Acc*>(p.partials)[split * p.items * p.run + o] = total;
      }
    }
    __syncthreads();  // the next item overwrites `partial`
  }
}

// The column outputs from the splits' partials [split][output] (Note [Column splits]): a thread
// per output, kFinishUnroll loads in flight, combined in split order.
template <class Pol, class T>
__global__ void __launch_bounds__(256)
    reduce_finish_columns_kernel(const void* partials, void* out, std::int64_t outputs,
                                 std::int64_t splits, std::int64_t count) {
  using M = typename Pol::M;
  using Acc = typename M::Acc;
  const Acc* part = static_cast<const Acc*>(partials);
  begin_dependent_kernel();
  for (std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       o < outputs; o += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Acc acc = M::identity();
    for (std::int64_t s = 0; s < splits; s += kFinishUnroll) {
      Acc v[kFinishUnroll];
#pragma unroll
      for (int u = 0; u < kFinishUnroll; ++u)
        if (s + u < splits) v[u] = part[(s + u) * outputs + o];
#pragma unroll
      for (int u = 0; u < kFinishUnroll; ++u)
        if (s + u < splits) acc = M::combine(acc, v[u]);
    }
    static_cast<T*>(out)[o] = Pol::finish(acc, count);
  }
}

// Note [Held rows]
// The rows paths (<op>_rows_sm90) serve calls that reduce the trailing axes of an aligned input:
// x is [rows, n] and each output a row's reduction. reduce_held_rows_kernel runs a block per row
// (no grid-stride loop: on the H200 one block per piece of work measured above a persistent grid,
// Note [Binary kernels] in kernels/elementwise/cuda/binary.cuh) of kHeldVectors 16-byte vectors
// per thread: every load of the row is issued before the first is used, then one block
// combination (a warp's shuffles, one shared slot per warp, one barrier), then thread 0 writes.
// Indices within a row are 32-bit and there is no division, segment or chunk loop, so the kernel
// holds its row in 16 registers and ptxas keeps it near 32 in all (build/cuda ptxas -v), against
// the 79-80 of reduce_rows_kernel's 64-bit, segment- and chunk-general loop, which let only 3
// blocks of 256 threads (48 KB of loads) run per SM. Here a block of 128-1024 threads carries
// 64 bytes per thread in flight; at 2048 threads per SM that is 128 KB per SM, over the 32-64 KB
// full bandwidth needs. Rows of kHeldMinVectors to kHeldMaxVectors vectors take it (n = 1024 to
// 32768 for 16-bit types); shorter rows keep the warp per row of reduce_rows_kernel, which packs
// several rows in a block, and longer or few long rows (which it splits into chunks) its plan.
// Accumulation, NaN propagation and mean's one division are the policies', as on every path.
// It is the reductions' one kernel launched with dependent launch: against the same kernel with
// TILEOPS_PDL=0 in one call on the H200 (bench/results/2026-12-02-h200-row-prefetch.md, bf16),
// [4096, 16384] 87.4-87.9 -> 90.2-92.5% of the copy ceiling, Amax of llama-8b-ffn 76.6 -> 84.8%.
// Those figures had the row prefetched into L2 before the wait as well (Note [Prefetch before the
// wait] in dependent_launch.cuh); measured apart, the prefetch was a loss, and the kernel no
// longer makes it. Sum, dependent launches both (bench/experiments/row_sum.cu,
// bench/results/2026-12-03-h200-prefetch-before-wait.md), with -> without: [2048, 4096] 68.9
// -> 73.2%, [2048, 14336] 85.5 -> 95.6%, [4096, 16384] 91.5 -> 102.5%, [16384, 8192] 91.3 -> 105.2%
// (of the 4.25 TB/s copy; a reduction reads its bytes and writes almost none); in `tileops bench`,
// against the last table with it, Sum hidden-state [2048, 4096] 66.8 -> 75.7%, Amax llama-8b-ffn
// 84.8 -> 91.0%, Sum [4096, 16384] 90.8 -> 103.6%. A block here loads
// its row as soon as it runs, so for every block placed after the previous kernel has ended the
// prefetch only adds requests for lines the loads ask for anyway.
inline constexpr int kHeldVectors = 4;
inline constexpr int kHeldMaxThreads = 1024;
inline constexpr int kHeldMinVectors = 32 * kHeldVectors;
inline constexpr int kHeldMaxVectors = kHeldMaxThreads * kHeldVectors;

// A block of blockDim.x (a multiple of 32, covering n_vec / kHeldVectors) threads per row of
// n_vec vectors; `count` is the row's element count (for mean). With kPartials the rows are the
// chunks of one contiguous run of `vectors` vectors (the last one shorter), and each block writes
// its accumulator to partials[blockIdx.x] for reduce_finish_kernel (Note [Held chunks]).
template <class Pol, class T, bool kPartials>
__global__ void __launch_bounds__(kHeldMaxThreads)
    reduce_held_rows_kernel(const T* __restrict__ x, void* __restrict__ out, int n_vec,
                            std::int64_t vectors, std::int64_t count) {
  using M = typename Pol::M;
  using Acc = typename M::Acc;
  constexpr int kN = Vec<T>::kSize;
  using P = Pack<T, kN>;
  __shared__ Acc partial[kHeldMaxThreads / 32];
  const int t = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * n_vec;
  const int n =
      kPartials ? static_cast<int>(min(static_cast<std::int64_t>(n_vec), vectors - first)) : n_vec;
  const T* row = x + first * kN;
  // Launched to overlap the previous kernel (Note [Dependent launch] in
  // src/cuda/dependent_launch.hpp), without a prefetch before the wait (Note [Held rows]).
  begin_dependent_kernel();
  P v[kHeldVectors];
#pragma unroll
  for (int j = 0; j < kHeldVectors; ++j)
    if (t + j * threads < n) v[j] = P::load_once(row + (t + j * threads) * kN);
  Acc acc = fold_packs<Pol>(M::identity(), v, [&](int j) { return t + j * threads < n; });
  const int warp = t / 32;
  const int lane = t % 32;
  acc = warp_all<M, 32>(acc);
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_all<M, 32>(lane < threads / 32 ? partial[lane] : M::identity());
    if (lane == 0) {
      if constexpr (kPartials) {
        static_cast<Acc*>(out)[blockIdx.x] = acc;
      } else {
        static_cast<T*>(out)[blockIdx.x] = Pol::finish(acc, count);
      }
    }
  }
}

// Note [Held chunks]
// A reduction of every element (Sum hidden-state-full, Amax fp8-per-tensor) has one output, so
// the plan cuts its run into chunks of kHeldVectors x kHeldMaxThreads vectors, a block each of the
// held rows kernel (every load issued before the first is used), and reduce_finish_kernel, a
// dependent launch placed while they run, adds the chunks' partials with a block. It replaced
// reduce_rows_kernel's chunks (4 blocks an SM, up to 4 rounds of loads a thread) finished by one
// warp: on the H200 (`tileops bench`, bench/results/2026-12-04-h200-reduction-column-tiles.md)
// Sum of float32 [2048, 4096] 15.10 -> 10.95 us, Mean 15.96 -> 10.95, Amax of bfloat16 [2048,
// 4096] 10.19 -> 7.32 (CUB's DeviceReduce: 7.99). The last block to arrive finishing instead of a
// second kernel measured the same (bench/experiments/reduce_column_tiles.cu).

// The outputs from their chunk partials [output][chunk]: a logical warp of kLanes lanes per
// output (0: a block per output, for few outputs of many chunks), combined in a fixed order.
template <class Pol, class T, int kLanes>
__global__ void __launch_bounds__(256)
    reduce_finish_kernel(const void* partials, void* out, std::int64_t outputs, std::int64_t chunks,
                         std::int64_t count) {
  using M = typename Pol::M;
  using Acc = typename M::Acc;
  __shared__ BlockScratch<Acc> scratch;
  const int lanes = Lanes<kLanes>::size();
  const int lane = Lanes<kLanes>::lane();
  const Acc* part = static_cast<const Acc*>(partials);
  begin_dependent_kernel();
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * Lanes<kLanes>::per_block();
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Lanes<kLanes>::per_block();
       first < outputs; first += groups) {
    const std::int64_t o = first + Lanes<kLanes>::index();
    Acc acc = M::identity();
    if (o < outputs) {
      for (std::int64_t c = lane; c < chunks; c += kReduceUnroll * lanes) {
        Acc v[kReduceUnroll];
#pragma unroll
        for (int u = 0; u < kReduceUnroll; ++u)
          if (c + u * lanes < chunks) v[u] = part[o * chunks + c + u * lanes];
#pragma unroll
        for (int u = 0; u < kReduceUnroll; ++u)
          if (c + u * lanes < chunks) acc = M::combine(acc, v[u]);
      }
    }
    acc = group_all<M, kLanes>(acc, scratch);
    if (o < outputs && lane == 0) static_cast<T*>(out)[o] = Pol::finish(acc, count);
  }
}

// An input without elements: every output is the reduction of nothing (0 for sum, NaN for mean).
template <class Pol, class T>
__global__ void reduce_fill_kernel(void* out, std::int64_t outputs, std::int64_t count) {
  const T value = Pol::finish(Pol::M::identity(), count);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < outputs; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    static_cast<T*>(out)[i] = value;
}

}  // namespace tileops::kernels::cuda::reduction
