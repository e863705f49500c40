// The CUDA kernel templates of softmax and log_softmax (manifest/reduction.yaml), x viewed as
// [rows, length, inner]. Framework-free: plain pointers and sizes; softmax_launch.cuh plans and
// launches them.
//
// Note [Softmax kernels]
// Every path finds the maximum and the sum of exp(x - max) in float32 and rounds each output to T
// once: softmax writes exp(x - max) * (1 / sum), log_softmax (x - max) - log(sum).
//   - registers (softmax_rows_kernel, inner == 1): a row held in registers, kAccesses accesses of
//     kN elements per lane, by a logical warp of 8 or 32 lanes (short rows, several per block) or
//     by a block of up to 1024 threads: one read and one write per element, the minimum traffic.
//     A block's row of 16 KB or more, or any block's row in a call of fewer rows than
//     multiprocessors, is staged in shared memory instead (softmax_staged_kernel in
//     softmax_staged.cuh, Note [Staged rows]): 78% -> 89% of the copy ceiling on [4096, 16384]
//     bfloat16, 3.8 -> 2.4 us on a single row of 4096. The implementation keeps its key.
//   - online (softmax_online_kernel, inner == 1): rows too long for registers. A block walks its
//     part of a row once keeping a running (max, sum) (the sum rescaled when the max grows), then
//     reads it again, mostly from L2, to write it. When there are fewer rows than multiprocessors
//     each row is cut into chunks: the first kernel writes a (max, sum) per chunk, a second one
//     (softmax_split_write_kernel) merges a row's partials and writes its chunk. A two-kernel
//     split rather than a thread-block cluster: it needs no cluster-size limit (a cluster holds at
//     most 16 blocks, so a single 128256-entry row would still use 16 multiprocessors), any
//     number of chunks can run, and the partials are a few bytes per chunk; the second read of
//     x comes from L2 either way.
//   - strided (softmax_strided_kernel, inner > 1): 32 adjacent columns per block, so that a warp
//     reads 32 consecutive elements, and 16 threads per column that each walk every 16th step of
//     the axis with a running (max, sum), merged through shared memory; then the write pass.
//     When the outer indices and column tiles are fewer than the multiprocessors ([32, 4096, 32]
//     along dim 1 has 32), the axis is cut into chunks over two kernels, as the online path
//     cuts rows (softmax_strided_write_kernel).
// The fast paths read 16-byte vectors (kN == Vec<T>::kSize); the same templates with kN == 1
// serve misaligned pointers and lengths that are not a multiple of a vector. Offsets are 64-bit.
// Measured on the H200 and not taken (bench/results/2026-12-01-h200-rope-softmax-variants.md): the
// register path is latency-bound, so what costs resident threads loses: one combined (max, sum)
// block reduction instead of two (41-48 registers), exponentials kept in registers, fewer blocks
// per multiprocessor. Rows read through shared memory by a bulk copy issued a row ahead by a
// persistent block of 1024 threads that still held them in registers gained 2-4 points on
// [4096, 16384] and lost 3 on [16384, 8192]; a block per row reading the staged row from shared
// memory, with many blocks per multiprocessor, is what gained (above).
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/reduction/cuda/combine.cuh"
#include "kernels/reduction/cuda/pack.cuh"

namespace tileops::kernels::cuda::reduction {

struct SoftmaxParams {
  const void* x = nullptr;
  void* out = nullptr;
  std::int64_t rows = 0;
  std::int64_t length = 0;
  std::int64_t inner = 1;
  // A split axis: chunks per row (online: accesses per chunk, one (max, sum) per chunk; strided:
  // steps per chunk, one (max, sum) per chunk and column).
  std::int64_t chunks = 1;
  std::int64_t chunk_accesses = 0;
  MaxExpSum* partials = nullptr;
};

// Independent accesses a thread issues together in the streaming loops.
inline constexpr int kSoftmaxUnroll = 4;
// The strided path's block: columns by threads per column.
inline constexpr int kStridedColumns = 32;
inline constexpr int kStridedSteps = 16;

// Note [Softmax exponentials]
// e^x as ex2.approx.ftz of x * log2(e): an FMUL and one MUFU.EX2, where expf's range reduction
// compiles to eight instructions. At full bandwidth a multiprocessor moves about 4 16-bit
// elements (each read and written) per clock and issues 128 thread-instructions per clock: about
// 32 instructions per element in all. Two expf per element, the NaN-propagating maximum and the
// conversions took about 34 in the registers path's SASS, which left it issue-bound. The error is
// that of CUDA's __expf, (2 + 1.17 |x|) ulp for x = v - max <= 0: under 2e-6 relative wherever
// e^x > 1e-30, inside float32's 1e-5 tolerance. Results below 2^-126 flush to 0; -inf gives 0
// and NaN stays NaN. The vector kernels (registers, online) use it; the strided kernels and the
// one-element-per-access ones keep expf (softmax_exp): they are not issue-bound, and with it the
// strided write kernel grew from 64 to 89 registers, one 512-thread block per SM instead of two.
__device__ __forceinline__ float fast_exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}

// fast_exp for the vector kernels, expf for the others (Note [Softmax exponentials]).
template <bool kFast>
__device__ __forceinline__ float softmax_exp(float x) {
  return kFast ? fast_exp(x) : expf(x);
}

template <bool kLog, bool kFast>
struct Normalizer {
  float max;
  float factor;  // 1 / sum, or log(sum)
  __device__ explicit Normalizer(MaxExpSum stats)
      : max(stats.max), factor(kLog ? logf(stats.sum) : 1.0f / stats.sum) {}
  __device__ float operator()(float v) const {
    return kLog ? (v - max) - factor : softmax_exp<kFast>(v - max) * factor;
  }
};

// Hides a packed vector from the optimiser so that only the packed row stays live across the
// reductions, not its float32 values (Note [Packed rows] in kernels/norm/cuda/norm.cuh).
template <class T, int kN>
__device__ __forceinline__ void opaque(Pack<T, kN>& p) {
  if constexpr (Pack<T, kN>::kVector) {
    auto* words = reinterpret_cast<unsigned*>(&p);
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(words[i]));
  }
}

// ---- Registers: a row per logical warp of kLanes lanes, or per block (kLanes == 0). ----
// The walk over rows is uniform across the hardware warp (a logical warp past the last row
// computes nothing and stores nothing) because the shuffles need every lane.
template <bool kLog, class T, int kN, int kLanes, int kAccesses>
__global__ void __launch_bounds__(kLanes > 0 ? 256 : 1024) softmax_rows_kernel(SoftmaxParams p) {
  using P = Pack<T, kN>;
  __shared__ BlockScratch<float> scratch;
  const int lanes = Lanes<kLanes>::size();
  const int lane = Lanes<kLanes>::lane();
  const auto accesses = static_cast<int>(p.length / kN);
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * Lanes<kLanes>::per_block();
  // The block's first rows asked for before the wait (Note [Prefetch before the wait] in
  // dependent_launch.cuh); 16-byte aligned rows only.
  if (P::kVector && threadIdx.x == 0)
    prefetch_rows_l2(p.x, static_cast<std::int64_t>(blockIdx.x) * Lanes<kLanes>::per_block(),
                     Lanes<kLanes>::per_block(), p.rows,
                     p.length * static_cast<std::int64_t>(sizeof(T)));
  begin_dependent_kernel();
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Lanes<kLanes>::per_block();
       first < p.rows; first += groups) {
    const std::int64_t row = first + Lanes<kLanes>::index();
    const bool active = row < p.rows;
    const std::int64_t offset = active ? row * p.length : 0;
    const T* x = static_cast<const T*>(p.x) + offset;
    P v[kAccesses] = {};
    float max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kAccesses; ++j) {
      const int a = lane + j * lanes;
      if (active && a < accesses) {
        v[j] = P::load_once(x + static_cast<std::int64_t>(a) * kN);
#pragma unroll
        for (int e = 0; e < kN; ++e) max = MaxMonoid<float>::combine(max, to_float(v[j].v[e]));
      }
    }
    max = group_all<MaxMonoid<float>, kLanes>(max, scratch);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kAccesses; ++j) {
      if (active && lane + j * lanes < accesses) {
#pragma unroll
        for (int e = 0; e < kN; ++e) sum += softmax_exp<P::kVector>(to_float(v[j].v[e]) - max);
      }
      opaque(v[j]);
    }
    sum = group_all<SumMonoid, kLanes>(sum, scratch);
    const Normalizer<kLog, P::kVector> normalize(MaxExpSum{max, sum});
    T* out = static_cast<T*>(p.out) + offset;
#pragma unroll
    for (int j = 0; j < kAccesses; ++j) {
      const int a = lane + j * lanes;
      if (!active || a >= accesses) continue;
      P y;
#pragma unroll
      for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(v[j].v[e])));
      y.store(out + static_cast<std::int64_t>(a) * kN);
    }
  }
}

// ---- Online: a block per (row, chunk), the chunk read twice. ----

// The running (max, sum) of this thread over accesses [begin, end) of x, kN elements each,
// strided by the block. Exponentials are rescaled only when the maximum grows.
template <class T, int kN>
__device__ __forceinline__ MaxExpSum online_stats(const T* x, std::int64_t begin,
                                                  std::int64_t end) {
  using P = Pack<T, kN>;
  MaxExpSum acc = SoftmaxMonoid::identity();
  const std::int64_t step = blockDim.x;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kSoftmaxUnroll * step) {
    P v[kSoftmaxUnroll];
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u)
      if (i + u * step < end) v[u] = P::load_kept(x + (i + u * step) * kN);
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u) {
      if (i + u * step >= end) continue;
      float local = -INFINITY;
#pragma unroll
      for (int e = 0; e < kN; ++e) local = fmaxf(local, to_float(v[u].v[e]));
      if (local > acc.max) {
        acc.sum *= softmax_exp<P::kVector>(acc.max - local);
        acc.max = local;
      }
      // Nothing but -inf so far (a masked prefix): every term is 0, and exp(-inf - -inf) is NaN.
      // fmaxf passed over any NaN of the vector; it makes the sum NaN (Note [Softmax statistics]).
      // Past the prefix a NaN reaches the sum through its own term.
      if (acc.max == -INFINITY) {
#pragma unroll
        for (int e = 0; e < kN; ++e)
          if (to_float(v[u].v[e]) != to_float(v[u].v[e])) acc.sum = NAN;
        continue;
      }
#pragma unroll
      for (int e = 0; e < kN; ++e)
        acc.sum += softmax_exp<P::kVector>(to_float(v[u].v[e]) - acc.max);
    }
  }
  return acc;
}

// Writes accesses [begin, end) of the row, normalised by the row's (max, sum).
template <bool kLog, class T, int kN>
__device__ __forceinline__ void write_normalized(const T* x, T* out, std::int64_t begin,
                                                 std::int64_t end, MaxExpSum stats) {
  using P = Pack<T, kN>;
  const Normalizer<kLog, P::kVector> normalize(stats);
  const std::int64_t step = blockDim.x;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kSoftmaxUnroll * step) {
    P v[kSoftmaxUnroll];
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u)
      if (i + u * step < end) v[u] = P::load_once(x + (i + u * step) * kN);
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u) {
      if (i + u * step >= end) continue;
      P y;
#pragma unroll
      for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(v[u].v[e])));
      y.store(out + (i + u * step) * kN);
    }
  }
}

// One (row, chunk) per block and loop; with one chunk per row it also writes the row, otherwise
// it leaves the chunk's (max, sum) for softmax_split_write_kernel.
template <bool kLog, class T, int kN>
__global__ void __launch_bounds__(1024) softmax_online_kernel(SoftmaxParams p) {
  __shared__ BlockScratch<float> scratch;
  const std::int64_t accesses = p.length / kN;
  const std::int64_t items = p.rows * p.chunks;
  begin_dependent_kernel();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t row = item / p.chunks;
    const std::int64_t begin = (item % p.chunks) * p.chunk_accesses;
    const std::int64_t end = min(accesses, begin + p.chunk_accesses);
    const T* x = static_cast<const T*>(p.x) + row * p.length;
    const MaxExpSum stats = block_softmax_stats(online_stats<T, kN>(x, begin, end), scratch);
    if (p.chunks > 1) {
      if (threadIdx.x == 0) p.partials[item] = stats;
      continue;
    }
    write_normalized<kLog, T, kN>(x, static_cast<T*>(p.out) + row * p.length, begin, end, stats);
  }
}

// The second kernel of a split row: merges the row's chunk partials (one per thread, then across
// the block) and writes this block's chunk.
template <bool kLog, class T, int kN>
__global__ void __launch_bounds__(1024) softmax_split_write_kernel(SoftmaxParams p) {
  __shared__ BlockScratch<float> scratch;
  const std::int64_t accesses = p.length / kN;
  const std::int64_t items = p.rows * p.chunks;
  begin_dependent_kernel();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t row = item / p.chunks;
    const std::int64_t begin = (item % p.chunks) * p.chunk_accesses;
    const std::int64_t end = min(accesses, begin + p.chunk_accesses);
    // A thread's partials (one when the chunks are no more than the threads), then the block's.
    const MaxExpSum* partials = p.partials + row * p.chunks + threadIdx.x;
    const int mine = static_cast<int>((p.chunks - threadIdx.x + blockDim.x - 1) / blockDim.x);
    const MaxExpSum stats = block_softmax_stats(
        merge_softmax_parts(mine, [&](int k) { return partials[k * blockDim.x]; }), scratch);
    write_normalized<kLog, T, kN>(static_cast<const T*>(p.x) + row * p.length,
                                  static_cast<T*>(p.out) + row * p.length, begin, end, stats);
  }
}

// ---- Strided: the axis is not the last one; blocks of kStridedColumns x kStridedSteps. ----

// Which (outer index, column tile, chunk of the axis) an item is, and the steps it covers.
struct StridedItem {
  std::int64_t outer;
  std::int64_t column;  // this thread's
  std::int64_t chunk;
  std::int64_t begin;
  std::int64_t end;
  __device__ StridedItem(const SoftmaxParams& p, std::int64_t item) {
    const std::int64_t tiles = (p.inner + kStridedColumns - 1) / kStridedColumns;
    chunk = item % p.chunks;
    const std::int64_t rest = item / p.chunks;
    outer = rest / tiles;
    column = (rest % tiles) * kStridedColumns + threadIdx.x;
    begin = chunk * p.chunk_accesses;
    end = min(p.length, begin + p.chunk_accesses);
  }
};

// The normalised steps [begin, end) of one column (stride `inner`); loads first, then stores:
// the compiler cannot hoist a load above a store that may alias it.
template <bool kLog, class T>
__device__ __forceinline__ void write_strided(const T* x, T* out, std::int64_t inner,
                                              std::int64_t begin, std::int64_t end,
                                              MaxExpSum stats) {
  const Normalizer<kLog, false> normalize(stats);
  for (std::int64_t d = begin + threadIdx.y; d < end; d += kSoftmaxUnroll * kStridedSteps) {
    float v[kSoftmaxUnroll];
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u) {
      const std::int64_t at = d + u * kStridedSteps;
      v[u] = at < end ? to_float(x[at * inner]) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kSoftmaxUnroll; ++u) {
      const std::int64_t at = d + u * kStridedSteps;
      if (at < end) out[at * inner] = from_float<T>(normalize(v[u]));
    }
  }
}

// One (outer index, column tile, chunk of the axis) per block and loop. With one chunk it also
// writes; otherwise it leaves a (max, sum) per column and chunk for softmax_strided_write_kernel.
template <bool kLog, class T>
__global__ void __launch_bounds__(kStridedColumns* kStridedSteps)
    softmax_strided_kernel(SoftmaxParams p) {
  __shared__ MaxExpSum partial[kStridedSteps][kStridedColumns];
  const std::int64_t tiles = (p.inner + kStridedColumns - 1) / kStridedColumns;
  const std::int64_t items = p.rows * tiles * p.chunks;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  begin_dependent_kernel();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const StridedItem it(p, item);
    const bool active = it.column < p.inner;
    const std::int64_t offset = it.outer * p.length * p.inner + (active ? it.column : 0);
    const T* x = static_cast<const T*>(p.x) + offset;
    MaxExpSum acc = SoftmaxMonoid::identity();
    if (active) {
      for (std::int64_t d = it.begin + ty; d < it.end; d += kSoftmaxUnroll * kStridedSteps) {
        float v[kSoftmaxUnroll];
#pragma unroll
        for (int u = 0; u < kSoftmaxUnroll; ++u) {
          const std::int64_t at = d + u * kStridedSteps;
          v[u] = at < it.end ? to_float(__ldg(x + at * p.inner)) : -INFINITY;
        }
#pragma unroll
        for (int u = 0; u < kSoftmaxUnroll; ++u) {
          if (d + u * kStridedSteps >= it.end) continue;
          if (!(v[u] <= acc.max)) {  // a NaN too (online_stats)
            acc.sum *= expf(acc.max - v[u]);
            acc.max = v[u];
          }
          // Nothing but -inf so far: the term is 0, and exp(-inf - -inf) is NaN.
          if (acc.max != -INFINITY) acc.sum += expf(v[u] - acc.max);
        }
      }
    }
    partial[ty][tx] = acc;
    __syncthreads();
    const MaxExpSum stats =
        merge_softmax_parts(kStridedSteps, [&](int k) { return partial[k][tx]; });
    __syncthreads();  // the next item overwrites `partial`
    if (!active) continue;
    if (p.chunks > 1) {
      if (ty == 0) p.partials[(it.outer * p.chunks + it.chunk) * p.inner + it.column] = stats;
      continue;
    }
    write_strided<kLog>(x, static_cast<T*>(p.out) + offset, p.inner, it.begin, it.end, stats);
  }
}

// The second kernel of a split axis: merges a column's chunk partials and writes this chunk.
template <bool kLog, class T>
__global__ void __launch_bounds__(kStridedColumns* kStridedSteps)
    softmax_strided_write_kernel(SoftmaxParams p) {
  const std::int64_t tiles = (p.inner + kStridedColumns - 1) / kStridedColumns;
  const std::int64_t items = p.rows * tiles * p.chunks;
  begin_dependent_kernel();
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const StridedItem it(p, item);
    if (it.column >= p.inner) continue;
    const MaxExpSum* partials = p.partials + it.outer * p.chunks * p.inner + it.column;
    const MaxExpSum stats = merge_softmax_parts(static_cast<int>(p.chunks),
                                                [&](int c) { return partials[c * p.inner]; });
    const std::int64_t offset = it.outer * p.length * p.inner + it.column;
    write_strided<kLog>(static_cast<const T*>(p.x) + offset, static_cast<T*>(p.out) + offset,
                        p.inner, it.begin, it.end, stats);
  }
}

}  // namespace tileops::kernels::cuda::reduction
