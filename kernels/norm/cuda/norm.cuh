// The norm family's CUDA kernel templates (manifest/norm.yaml, docs/manifest.md §4.1): RMSNorm,
// LayerNorm and the fused residual add + RMSNorm, over rows of `n` contiguous elements.
// Framework-free: plain pointers and sizes; kernels/norm/cuda/norm_launch.cu instantiates and
// launches them.
//
// Note [Norm kernels]
// Statistics accumulate in float32 and each output is rounded to T once (the CPU kernels' and the
// manifest's rule). Every path reads x (and the residual) from device memory once per row:
//   - registers (norm_rows_kernel): a group of threads holds a row in registers as 16-byte
//     vectors, kVpt per thread; a logical warp of 8 or 32 lanes per row for short rows (several
//     rows per block), a whole block per row otherwise. The grid is sized to the device (Note
//     [Norm grid] in norm_launch.cu and each group walks its rows; the weight and bias a lane
//     reads are the same for every row, so after the first row they come from L1. Holding them
//     in registers instead spills: ptxas caps a 1024-thread block at 64 registers.
//   - fixed (norm_fixed_rows_kernel in norm_fixed.cuh): RMSNorm's and LayerNorm's 16-bit rows of
//     4096, 8192 and 16384 elements in registers, a block per row, the row's length, the block's
//     shape and the affine tensors fixed at compile time (Note [Fixed rows]).
//   - staged (norm_staged_kernel in norm_staged.cuh): a block per row, the row copied into
//     shared memory by the copy engine (Note [Staged rows]); LayerNorm's and FusedAddRMSNorm's
//     rows of 8 to 32 KB (LayerNorm's float32 rows from 16 KB: norm_shared_row_bytes_above).
//   - few rows (norm_few_rows_kernel in norm_few_rows.cuh): block- and shared-path calls of fewer
//     rows than multiprocessors (Note [Few rows]), each row split over a cluster of blocks.
//   - streaming (norm_stream_kernel): rows too long for registers; a block per row reads the row
//     twice (three times for LayerNorm), the later passes mostly from L2, which keeps the rows of
//     the blocks in flight.
//   - general: the streaming kernel with one element per access, for pointers or row lengths that
//     are not 16-byte aligned.
// Offsets are 64-bit wherever they can exceed 2^31 (row * n, and element indices within a row in
// the streaming kernel), so no path refuses a large tensor. Measured on the H200 and not kept
// (bench/results/2026-12-02-h200-norm-reductions.md): LayerNorm's mean and variance in one
// reduction of Chan-merged (count, mean, M2) triples (8-12 points slower: a division and three
// shuffles per level lengthen the chain the stores wait for), and block sums with one barrier
// (within noise on prefill, 0.4 us slower on decode).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

enum class NormKind { kRMS, kLayer, kFusedAddRMS };

// The tensors and sizes of one launch. Pointers are to T; `residual` only for kFusedAddRMS (read
// and written in place), `bias` only for kLayer; weight and bias may be null.
struct NormParams {
  const void* x = nullptr;
  void* residual = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* out = nullptr;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  float eps = 0.0f;
};

// The row's statistics as what every element gets before the affine weight and bias:
// y = (x - mean) * scale. RMSNorm: mean 0, scale = rsqrt(mean(x^2) + eps); LayerNorm: the mean and
// scale = rsqrt(var + eps). Centering before scaling keeps x close to a large mean exact.
struct RowScale {
  float mean;
  float scale;
};

// Note [LayerNorm in one reduction]
// A 16-bit LayerNorm sums x and x^2 in one reduction of a pair and takes var = E[x^2] - mean^2,
// where that cannot cancel: mean^2 <= 8 var. There E[x^2] <= 9 var, so the float32 rounding of the
// sums costs var a relative error of a few tens of float32 ulps per element summed per thread (at
// most about 1e-4, with 64 elements a thread), a hundredth of a float16 ulp of the output. Past it
// (a row far from zero mean), and for rows with a NaN or an infinity (the comparison is false),
// the kernel runs the centered second reduction it always ran, so the bound holds for every row;
// the branch is uniform (every thread holds the same sums). float32 rows always take the centered
// reduction: their tolerance is a few float32 ulps. The second reduction costs a decode row of
// 4096 about 0.4 us (Note [Few rows]: LayerNorm 1.81 us against RMSNorm's 1.38).
template <class T>
__device__ __forceinline__ bool variance_from_moments(float mean, float mean_of_squares,
                                                      float* variance) {
  if constexpr (sizeof(T) >= 4) {
    return false;
  } else {
    const float v = mean_of_squares - mean * mean;
    if (!(mean * mean <= 8.0f * v)) return false;
    *variance = v;
    return true;
  }
}

// A group of a row's elements (a Vec or an Access) normalised: (a - mean) * scale [* w] [+ b],
// each element in float32 and rounded to T once; w and b are read only when weighted / biased.
template <class G>
__device__ __forceinline__ G normalized(const G& a, const G& w, const G& b, bool weighted,
                                        bool biased, RowScale rs) {
  using T = std::remove_cvref_t<decltype(a.v[0])>;
  constexpr int kCount = static_cast<int>(sizeof(G::v) / sizeof(T));
  G y;
#pragma unroll
  for (int e = 0; e < kCount; ++e) {
    float value = (to_float(a.v[e]) - rs.mean) * rs.scale;
    if (weighted) value *= to_float(w.v[e]);
    if (biased) value += to_float(b.v[e]);
    y.v[e] = from_float<T>(value);
  }
  return y;
}

// A thread's share of a row's statistics over the vectors it holds in registers (the register and
// fixed-length kernels): the sums of x and x^2 (LayerNorm's pair), the sum of x^2 (RMSNorm), and
// the sum of (x - mean)^2 over the vectors `held(j)` says are the row's (LayerNorm's centered
// reduction; a slot past the row holds zeros, which count only in the sums).
template <class T, int kVpt>
__device__ __forceinline__ float2 sums_and_squares(const Vec<T> (&row)[kVpt]) {
  float2 sums{0.0f, 0.0f};
#pragma unroll
  for (int j = 0; j < kVpt; ++j)
#pragma unroll
    for (int e = 0; e < Vec<T>::kSize; ++e) {
      const float f = to_float(row[j].v[e]);
      sums.x += f;
      sums.y += f * f;
    }
  return sums;
}
template <class T, int kVpt>
__device__ __forceinline__ float sum_of_squares(const Vec<T> (&row)[kVpt]) {
  float squares = 0.0f;
#pragma unroll
  for (int j = 0; j < kVpt; ++j)
#pragma unroll
    for (int e = 0; e < Vec<T>::kSize; ++e) {
      const float v = to_float(row[j].v[e]);
      squares += v * v;
    }
  return squares;
}
template <class T, int kVpt, class Held>
__device__ __forceinline__ float centered_squares(const Vec<T> (&row)[kVpt], float mean,
                                                  Held&& held) {
  float centered = 0.0f;
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    if (!held(j)) continue;
#pragma unroll
    for (int e = 0; e < Vec<T>::kSize; ++e) {
      const float d = to_float(row[j].v[e]) - mean;
      centered += d * d;
    }
  }
  return centered;
}

// ---- Registers: a row per group of kThreads lanes (kThreads <= 32), or per block (0). ----

template <int kThreads>
struct RowGroup {
  // Lanes per row, the lane of this thread, rows per block.
  __device__ static int size() { return kThreads > 0 ? kThreads : static_cast<int>(blockDim.x); }
  __device__ static int lane() {
    return kThreads > 0 ? static_cast<int>(threadIdx.x) % kThreads : static_cast<int>(threadIdx.x);
  }
  __device__ static int per_block() {
    return kThreads > 0 ? static_cast<int>(blockDim.x) / kThreads : 1;
  }
  __device__ static int index() {
    return kThreads > 0 ? static_cast<int>(threadIdx.x) / kThreads : 0;
  }
};

// Hides a vector's value from the optimiser (Note [Packed rows]).
template <class T>
__device__ __forceinline__ void opaque(Vec<T>& v) {
  auto* words = reinterpret_cast<unsigned*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(words[i]));
}

template <int kThreads, class V>
__device__ __forceinline__ V row_sum(V value, BlockSumStorageOf<V>& storage) {
  if constexpr (kThreads > 0) {
    return group_sum<kThreads>(value);
  } else {
    return block_sum(value, storage);
  }
}

// Rows in registers. Each group walks rows r = first + k * stride; for logical warps the walk is
// uniform across the hardware warp (a group past the last row computes on zeros and stores
// nothing), because the warp's shuffles need every lane.
// Note [Few rows]
// A call of fewer rows than the device has multiprocessors (decode) is latency, not bandwidth: the
// trip to memory of the row and the weights, the reductions, the store. The block and shared
// paths launch norm_few_rows_kernel (norm_few_rows.cuh) for it: each row split over a cluster of
// blocks, one 16-byte vector per thread, every load issued before the first reduction, the blocks'
// partial sums exchanged through distributed shared memory, and each block's operands prefetched
// into L2 before the dependent wait (Note [Prefetch before the wait] in dependent_launch.cuh).
// Splitting the row shortens what one multiprocessor must read (the time grew by 0.3 us per 16 KB
// of row on one block); the exchange costs a cluster barrier per reduction. Measured on the H200
// (bench/experiments/dependent_launch.cu, bench/results/2026-12-02-h200-decode-prefetch.md,
// bfloat16 rows of 4096 / 8192 / 16384 rotated beyond the L2, dependent launch, us):
//
//   kernel                         RMSNorm             LayerNorm           FusedAddRMSNorm
//   staged, weights staged (was)   1.87 / 2.18 / 2.80  2.37 / 2.90 / 4.04  2.11 / 2.65 / 3.61
//   one block, registers           1.62 / 1.90 / 2.43  1.97 / 2.34 / 3.18  1.70 / 2.14 / 3.21
//   the same, prefetch             1.30 / 1.56 / 2.14  1.68 / 2.05 / 2.86  1.68 / 2.03 / 2.85
//   cluster of 4, prefetch         1.31 / 1.39 / 1.59  1.88 / 1.98 / 2.30  1.42 / 1.60 / 1.84
//   cluster of 8, prefetch         1.34 / 1.37 / 1.44  2.01 / 2.03 / 2.14  1.45 / 1.48 / 1.65
//
// (An empty kernel: 0.41 us.) The library's kernel (the cluster size a template parameter, the
// row's length and the affine tensors checked at run time), same harness, us:
//
//   cluster of                     1                   4                   8
//   RMSNorm, rows of 4096 / 8192   1.38 / 1.81         1.41 / 1.48         1.45 / 1.48
//   LayerNorm                      1.81 / 2.43         2.03 / 2.17         2.17 / 2.19
//   FusedAddRMSNorm                1.56 / 2.16         1.48 / 1.59         1.54 / 1.56
//   rows of 16384 (R / L / F)                          1.75 / 2.60 / 1.94  1.56 / 2.36 / 1.69
//
// LayerNorm in one reduction (Note [LayerNorm in one reduction]), same harness, rows of 4096 /
// 8192, us: clusters of 1, 2, 4, 8: 1.62 / 2.20, 1.61 / 1.95, 1.52 / 1.65, 1.57 / 1.59; and
// FusedAddRMSNorm at 4096: 1.58, 1.55, 1.50, 1.53; RMSNorm at 4096: 1.41, 1.49, 1.44, 1.46.
// So LayerNorm's rows of up to 256 vectors take one block, the other ops' of up to 512 (in
// `tileops bench` FusedAddRMSNorm measured 1.57 us alone and 1.61 in clusters of 4); longer ones
// blocks of about 128 vectors, at most 8. At 32 rows of 4096 every cluster lost
// to one block per row (RMSNorm 1.48 us alone, 1.77 in clusters of 4), so the cluster shrinks as
// the rows grow (few_rows_cluster in norm_launch.cu). FusedAddRMSNorm stores the updated residual
// after the exchanges: stored before them, the release of the cluster barrier (MEMBAR.ALL.GPU in
// SASS) waited for the store, and the op ran 0.1-0.2 us slower in clusters (1.65 / 1.70 us at 4096
// / 8192 in clusters of 4). The prototypes stay up to
// 0.1 us faster at 4096 (they assume exact slices and a weight); the staged few-rows kernel and the
// register kernel without the split are gone.
template <NormKind kKind, class T, int kThreads, int kVpt>
__global__ void __launch_bounds__(kThreads > 0 ? 256 : 1024) norm_rows_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const int lanes = RowGroup<kThreads>::size();
  const int lane = RowGroup<kThreads>::lane();
  const int n_vec = static_cast<int>(p.n / kN);
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);

  const std::int64_t groups =
      static_cast<std::int64_t>(gridDim.x) * RowGroup<kThreads>::per_block();
  const std::int64_t first =
      static_cast<std::int64_t>(blockIdx.x) * RowGroup<kThreads>::per_block();
  const float inv_n = 1.0f / static_cast<float>(p.n);
  // The block's first rows asked for before the wait (Note [Prefetch before the wait] in
  // dependent_launch.cuh).
  if (threadIdx.x == 0) {
    const std::int64_t row_bytes = p.n * static_cast<std::int64_t>(sizeof(T));
    const int count = RowGroup<kThreads>::per_block();
    prefetch_rows_l2(p.x, first, count, p.rows, row_bytes);
    if constexpr (kKind == NormKind::kFusedAddRMS)
      prefetch_rows_l2(p.residual, first, count, p.rows, row_bytes);
  }
  begin_dependent_kernel();
  for (std::int64_t base = first; base < p.rows; base += groups) {
    const std::int64_t row = base + RowGroup<kThreads>::index();
    const bool active = row < p.rows;
    const std::int64_t offset = row * p.n;
    V x[kVpt];
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = lane + j * lanes;
      const bool in_row = active && v < n_vec;
      const std::int64_t at = offset + static_cast<std::int64_t>(v) * kN;
      if constexpr (kKind == NormKind::kFusedAddRMS) {
        // residual <- T(x + residual); the rest of the row works on the stored (rounded) values.
        if (in_row) {
          const V a = load_vec_streaming(static_cast<const T*>(p.x) + at);
          // A plain (coherent) load: the kernel writes the residual.
          V r = load_vec_coherent(static_cast<const T*>(p.residual) + at);
#pragma unroll
          for (int e = 0; e < kN; ++e) r.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
          store_vec(static_cast<T*>(p.residual) + at, r);
          x[j] = r;
        } else {
          x[j] = zero_vec<T>();
        }
      } else {
        x[j] = in_row ? load_vec_streaming(static_cast<const T*>(p.x) + at) : zero_vec<T>();
      }
    }

    RowScale rs;
    if constexpr (kKind == NormKind::kLayer) {
      const float2 sums = row_sum<kThreads>(sums_and_squares(x), pair_storage);
      const float mean = sums.x * inv_n;
      float variance = 0.0f;
      bool moments = variance_from_moments<T>(mean, sums.y * inv_n, &variance);
      // Logical warps share a hardware warp's shuffles: the second reduction runs in all of them
      // when one needs it.
      if constexpr (kThreads > 0 && kThreads < 32) moments = __all_sync(0xffffffffu, moments);
      if (!moments) {
        // Centered, on the registers (Note [LayerNorm in one reduction]).
        const float centered =
            centered_squares(x, mean, [&](int j) { return lane + j * lanes < n_vec; });
        variance = row_sum<kThreads>(centered, storage) * inv_n;
      }
      rs = {mean, rsqrtf(variance + p.eps)};
    } else {
      rs = {0.0f, rsqrtf(row_sum<kThreads>(sum_of_squares(x), storage) * inv_n + p.eps)};
    }
    // Note [Packed rows]: only the packed row stays live across the reduction; without this the
    // compiler keeps the float32 values of the first pass, twice the registers for 16-bit types.
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      opaque(x[j]);
    }

    // The weight and bias are the same for every row: after the first row of a block they come
    // from L1, so they are read here rather than held in registers across the reduction.
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = lane + j * lanes;
      if (!active || v >= n_vec) continue;
      const std::int64_t at = static_cast<std::int64_t>(v) * kN;
      constexpr bool kMayBias = kKind == NormKind::kLayer;
      V w{}, b{};
      if (weight) w = load_vec(weight + at);
      if (kMayBias && bias) b = load_vec(bias + at);
      store_vec_streaming(static_cast<T*>(p.out) + offset + at,
                          normalized(x[j], w, b, weight != nullptr, kMayBias && bias, rs));
    }
  }
}

// ---- Streaming: a block per row, the row read in passes; kN elements per access. ----

// One access of kN elements of a row: a 16-byte vector, or one element for the general path.
// load_ro reads through the read-only path (inputs the kernel never writes); load is a plain,
// coherent load (the fused op's residual, which the kernel writes and reads back).
template <class T, int kN>
struct Access {
  static constexpr bool kVector = kN == Vec<T>::kSize && kN > 1;
  T v[kN];

  __device__ static Access from(const Vec<T>& vec) {
    Access a;
#pragma unroll
    for (int e = 0; e < kN; ++e) a.v[e] = vec.v[e];
    return a;
  }
  __device__ static Access load_ro(const T* p) {
    if constexpr (kVector) {
      return from(load_vec(p));
    } else {
      Access a;
#pragma unroll
      for (int e = 0; e < kN; ++e) a.v[e] = __ldg(p + e);
      return a;
    }
  }
  __device__ static Access load(const T* p) {
    if constexpr (kVector) {
      return from(load_vec_coherent(p));
    } else {
      Access a;
#pragma unroll
      for (int e = 0; e < kN; ++e) a.v[e] = p[e];
      return a;
    }
  }
  __device__ void store(T* p) const {
    if constexpr (kVector) {
      Vec<T> vec;
#pragma unroll
      for (int e = 0; e < kN; ++e) vec.v[e] = v[e];
      store_vec(p, vec);
    } else {
#pragma unroll
      for (int e = 0; e < kN; ++e) p[e] = v[e];
    }
  }
};

// Independent accesses a thread keeps in flight per pass.
inline constexpr int kStreamUnroll = 4;

// Calls f(i) for each access index i = threadIdx.x + k * blockDim.x below `count`, kStreamUnroll
// at a time so that their loads are issued together.
template <class F>
__device__ __forceinline__ void for_each_access(std::int64_t count, F&& f) {
  const std::int64_t step = blockDim.x;
  for (std::int64_t i = threadIdx.x; i < count; i += kStreamUnroll * step) {
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      const std::int64_t k = i + u * step;
      if (k < count) f(k);
    }
  }
}

template <NormKind kKind, class T, int kN>
__global__ void __launch_bounds__(1024) norm_stream_kernel(NormParams p) {
  using A = Access<T, kN>;
  __shared__ BlockSumStorage storage;
  const std::int64_t count = p.n / kN;
  const float inv_n = 1.0f / static_cast<float>(p.n);
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = kKind == NormKind::kLayer ? static_cast<const T*>(p.bias) : nullptr;
  begin_dependent_kernel();
  for (std::int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const std::int64_t offset = row * p.n;
    const T* x = static_cast<const T*>(p.x) + offset;
    T* out = static_cast<T*>(p.out) + offset;
    RowScale rs;
    if constexpr (kKind == NormKind::kLayer) {
      float sum = 0.0f;
      for_each_access(count, [&](std::int64_t i) {
        const A a = A::load_ro(x + i * kN);
#pragma unroll
        for (int e = 0; e < kN; ++e) sum += to_float(a.v[e]);
      });
      const float mean = block_sum(sum, storage) * inv_n;
      float centered = 0.0f;
      for_each_access(count, [&](std::int64_t i) {
        const A a = A::load_ro(x + i * kN);
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          const float d = to_float(a.v[e]) - mean;
          centered += d * d;
        }
      });
      const float rstd = rsqrtf(block_sum(centered, storage) * inv_n + p.eps);
      rs = {mean, rstd};
    } else if constexpr (kKind == NormKind::kFusedAddRMS) {
      T* residual = static_cast<T*>(p.residual) + offset;
      float squares = 0.0f;
      for_each_access(count, [&](std::int64_t i) {
        const A a = A::load_ro(x + i * kN);
        A r = A::load(residual + i * kN);
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          r.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
          const float v = to_float(r.v[e]);
          squares += v * v;
        }
        r.store(residual + i * kN);
      });
      rs = {0.0f, rsqrtf(block_sum(squares, storage) * inv_n + p.eps)};
    } else {
      float squares = 0.0f;
      for_each_access(count, [&](std::int64_t i) {
        const A a = A::load_ro(x + i * kN);
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          const float v = to_float(a.v[e]);
          squares += v * v;
        }
      });
      rs = {0.0f, rsqrtf(block_sum(squares, storage) * inv_n + p.eps)};
    }
    // The last pass. The fused op normalises the residual it stored: the same thread reads back
    // the same elements it wrote, so program order makes the writes visible without a barrier.
    const T* source = x;
    if constexpr (kKind == NormKind::kFusedAddRMS)
      source = static_cast<const T*>(p.residual) + offset;
    for_each_access(count, [&](std::int64_t i) {
      const A a =
          kKind == NormKind::kFusedAddRMS ? A::load(source + i * kN) : A::load_ro(source + i * kN);
      A w, b;
      if (weight) w = A::load_ro(weight + i * kN);
      if (bias) b = A::load_ro(bias + i * kN);
      normalized(a, w, b, weight != nullptr, bias != nullptr, rs).store(out + i * kN);
    });
  }
}

}  // namespace tileops::kernels::cuda
