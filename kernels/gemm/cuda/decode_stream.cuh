// The streamed decode GEMM: GemmFwdOp's products of one row with a column-major weight, the weight
// copied into shared memory by the copy engine in one even, contiguous share a multiprocessor.
// Framework-free (plain pointers and sizes), like decode_gemm.cuh; decode_stream.cu instantiates
// the candidate (decode_gemm_launch.hpp), and bench/experiments/decode_gemm.cu sweeps its shapes.
// Results: bench/results/2026-12-04-h200-streamed-decode-gemm.md.
//
// Note [Streamed decode GEMM]
// The library's decode kernel (Note [Decode GEMM]) streams the weights of Llama-3-8B's small
// products (33-50 MB) at 3.0-3.3 TB/s and the large ones at 3.9-4.3: fitted over the sizes, about
// 4 us a call on top of the bytes at 4.5 TB/s. Its warps ask for 64-byte pieces of 8-16 columns
// at once, each column 8-28 KB apart, and a block's columns end when its loads do.
//   - One block a multiprocessor owns an even share of the columns (N / grid, one more for some),
//     all of K: a contiguous range of the weight when ldb = K (an nn.Linear weight's rows).
//   - The share is walked in items of at most kStageBytes (whole columns when K fits, else slices
//     of one column), dealt to the block's warps in turn. Each warp streams its own items through
//     `depth` stages of its own (Note [Staged rows] in kernels/common/cuda/staged_rows.cuh): lane 0
//     starts one bulk copy a column of the item, and refills a stage with the warp's next item as
//     soon as the warp has read it. A warp waits only on its own stages, in order: with one
//     producer thread for the block, a slow warp held up every other warp's copies, and with
//     stages shared round-robin a warp could wait on a barrier two phases ahead, which a parity
//     wait cannot tell from the phase before (it hung).
//   - Lane l takes the 16-byte vectors l, l + 32, ... of each column, multiplies them with a's
//     row(s) (read through L1, or from shared memory where a's rows are copied once with
//     kSharedA), accumulates in float32, reduces over the warp and adds to the column's sum in
//     shared memory; the block writes its sums at the end.
//   - Launched as a dependent kernel; before the wait each warp asks L2 for its first items'
//     bytes (Note [Prefetch before the wait] in kernels/common/cuda/dependent_launch.cuh).
//   - kGroup > 1: groups of kGroup warps own the stages instead of single warps, the group's
//     lanes splitting each column's vectors (lane l of member w takes vectors 32 w + l,
//     32 w + l + 32 kGroup, ...), and a named barrier of the group before a stage's refill: more
//     warps a multiprocessor for the same stages (an ncu profile of the one-warp version found 2
//     warps a scheduler and no eligible warp 65% of cycles).
//   - kRegisterA (one row; K within a stage, or a column's slices a divisor of the groups, so that
//     a group's items all have one k range, register_a_fits): lane l of a group meets the same
//     vectors of a, k0 / 8 + l + j 32 kGroup, in every item, so it converts them to float32 once
//     into registers (64 floats at 8 KB stages in pairs) and a column's product is a shared load
//     and 16 instructions a vector instead of 26. On the H200 at one row
//     (bench/results/2026-12-04-h200-decode-a-in-registers.md): 8B qkv 15.07 -> 14.36 us, o
//     11.8 -> 10.6, gate/up 54.6 -> 54.2. Releasing the stage as soon as its column is in
//     registers, before the product, made them slower (17.3-17.5 us at qkv), and so did a third
//     stage or single warps. Slices held the same way: 8B down 32.3 -> 29.9 us, 70B qkv and o
//     1% faster (bench/results/2026-12-04-h200-decode-register-a-slices.md).
// Requirements: M <= kRows, 16-bit types, b column-major with K and ldb multiples of 8, b and a
// 16-byte aligned, lda a multiple of 8; N < 2^31; the stages, a (kSharedA) and the sums within the
// 227 KB of shared memory a block may have.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/staged_rows.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/gemm/cuda/decode_gemm_launch.hpp"

namespace tileops::kernels::cuda {

namespace decode_stream {

// The block's share of the columns and how it is cut into items.
struct Share {
  std::int64_t first = 0, end = 0;  // columns [first, end)
  std::int64_t per_item = 1;        // whole columns an item (when K fits a stage)
  std::int64_t slices = 1;          // slices a column (when it does not)
  std::int64_t slice = 0;           // k of a slice
  std::int64_t items = 0;
};

__device__ __forceinline__ Share share_of(std::int64_t n, std::int64_t k, std::int64_t stage_k,
                                          unsigned block, unsigned blocks) {
  Share s;
  s.first = n * block / blocks;
  s.end = n * (block + 1) / blocks;
  const std::int64_t columns = s.end - s.first;
  if (k <= stage_k) {
    s.per_item = stage_k / k;
    s.slice = k;
    s.items = (columns + s.per_item - 1) / s.per_item;
  } else {
    s.slices = (k + stage_k - 1) / stage_k;
    s.slice = stage_k;
    s.items = columns * s.slices;
  }
  return s;
}

// Item i of a share: its first column, how many columns, its k range.
struct Item {
  std::int64_t column, columns, k0, k;
};

__device__ __forceinline__ Item item_of(const Share& s, std::int64_t i, std::int64_t k) {
  if (s.slices == 1) {
    const std::int64_t column = s.first + i * s.per_item;
    const std::int64_t left = s.end - column;
    return {column, left < s.per_item ? left : s.per_item, 0, k};
  }
  const std::int64_t k0 = (i % s.slices) * s.slice;
  return {s.first + i / s.slices, 1, k0, k - k0 < s.slice ? k - k0 : s.slice};
}

// Whether a's one row can be held in registers (kRegisterA) for K over stages of stage_k and
// `groups` groups: every item a group takes has the same k range. That holds where K fits a stage
// (whole columns an item), or where a column's slices divide the groups: item i is slice
// i % slices and group g takes the items g + j groups, so its slice is always g % slices.
__host__ __device__ constexpr bool register_a_fits(std::int64_t k, std::int64_t stage_k,
                                                   int groups) {
  const std::int64_t slices = (k + stage_k - 1) / stage_k;
  return slices >= 1 && slices <= groups && groups % slices == 0;
}

__device__ __forceinline__ void barrier_init(StageBarrier& bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(&bar)),
               "r"(arrivals));
}

// A word of two 16-bit values of T as two floats (bfloat16's conversion is a shift).
template <class T>
__device__ __forceinline__ float2 pair_to_float2(std::uint32_t word) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(word << 16), __uint_as_float(word & 0xffff0000u));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&word));
  }
}

// The 8 products of a 16-byte vector of weights and one of a, added to `sum` in float32.
template <class T>
__device__ __forceinline__ float dot8(const uint4& w, const uint4& a, float sum) {
  const std::uint32_t ws[4] = {w.x, w.y, w.z, w.w}, as[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 wf = pair_to_float2<T>(ws[i]), af = pair_to_float2<T>(as[i]);
    sum = fmaf(wf.x, af.x, sum);
    sum = fmaf(wf.y, af.y, sum);
  }
  return sum;
}

// The 8 products of a 16-byte vector of weights and 8 floats of a, added to `sum` in float32.
template <class T>
__device__ __forceinline__ float dot8(const uint4& w, const float (&a)[8], float sum) {
  const std::uint32_t ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 wf = pair_to_float2<T>(ws[i]);
    sum = fmaf(wf.x, a[2 * i], sum);
    sum = fmaf(wf.y, a[2 * i + 1], sum);
  }
  return sum;
}

// Dynamic shared memory of a launch: the stages, then a's rows when staged (a_bytes), then the
// barriers (one a stage and a's), then the column sums.
__host__ __device__ constexpr std::int64_t shared_bytes(int stages, std::int64_t stage_bytes,
                                                        std::int64_t a_bytes, int rows,
                                                        std::int64_t columns) {
  return stages * stage_bytes + a_bytes + (stages + 1) * 8 + rows * columns * 4;
}

}  // namespace decode_stream

// kRows: a's rows the kernel is built for (p.m <= kRows; 0: no product, the copies alone, for the
// experiment); kStageBytes: bytes of one stage; kWarps: warps a block, each with `depth` stages of
// its own; kUnroll: vectors a lane loads before it multiplies; kSharedA: a's rows copied into
// shared memory once (else read through L1); kGroup: warps that share their stages (a divisor
// of kWarps; kWarps / kGroup groups, each with `depth` stages); kRegisterA: a's one row held in
// registers as float32 (kRows 1, not kSharedA, register_a_fits).
template <class T, int kRows, int kStageBytes, int kWarps, int kUnroll = 4, bool kSharedA = false,
          int kGroup = 1, bool kRegisterA = false>
__global__ void __launch_bounds__(32 * kWarps)
    decode_stream_kernel(const DecodeGemmProblem p, int depth) {
  using namespace decode_stream;
  static_assert(kWarps % kGroup == 0 && kWarps / kGroup < 16, "groups: named barriers 1..15");
  static_assert(!kRegisterA || (kRows == 1 && !kSharedA), "a in registers: one row, not staged");
  constexpr int kThreads = 32 * kWarps;
  constexpr int kGroups = kWarps / kGroup;
  constexpr int kGroupLanes = 32 * kGroup;
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr std::int64_t kStageK = kStageBytes / 2;
  // kRegisterA (K <= kStageK: whole columns an item): a lane meets the same vectors of a in every
  // column, group_lane + j kGroupLanes, and holds them as float32 from the start.
  static_assert(!kRegisterA || (kStageK / 8) % kGroupLanes == 0,
                "a in registers: a stage's column a whole number of vectors a lane");
  constexpr int kAVectors = kRegisterA ? static_cast<int>(kStageK / 8 / kGroupLanes) : 1;
  const Share share = share_of(p.n, p.k, kStageK, blockIdx.x, gridDim.x);
  const std::int64_t columns = share.end - share.first;
  const int stages = kGroups * depth;
  const std::int64_t a_bytes = kSharedA ? kRows * p.k * 2 : 0;
  T* a_shared = reinterpret_cast<T*>(smem + std::int64_t{stages} * kStageBytes);
  auto* full = reinterpret_cast<StageBarrier*>(smem + std::int64_t{stages} * kStageBytes + a_bytes);
  StageBarrier& a_landed = full[stages];
  auto* sums = reinterpret_cast<float*>(full + stages + 1);  // [kRows][columns]
  const int t = static_cast<int>(threadIdx.x), lane = t % 32;
  const int group = t / kGroupLanes, group_lane = t % kGroupLanes;
  const bool issuer = group_lane == 0;  // starts its group's copies
  const T* b = static_cast<const T*>(p.b);
  // Group g takes the items g, g + kGroups, ...; its n-th item goes to its stage n % depth.
  const auto stage_of = [&](std::int64_t n) { return group * depth + static_cast<int>(n % depth); };
  const auto start = [&](std::int64_t n) {  // the issuer: the copies of the group's n-th item
    const std::int64_t i = group + n * kGroups;
    if (i >= share.items) return;
    const Item it = item_of(share, i, p.k);
    const int s = stage_of(n);
    T* stage = reinterpret_cast<T*>(smem + std::int64_t{s} * kStageBytes);
    stage_barrier_expect(full[s], static_cast<unsigned>(it.columns * it.k * 2));
    for (std::int64_t c = 0; c < it.columns; ++c)
      stage_copy(stage + c * it.k, b + (it.column + c) * p.ldb + it.k0,
                 static_cast<unsigned>(it.k * 2), full[s], true);
  };

  if (kSharedA && t == 0) barrier_init(a_landed, 1);
  if (issuer) {
    for (int j = 0; j < depth; ++j) barrier_init(full[group * depth + j], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int j = 0; j < depth; ++j) {
      const std::int64_t i = group + std::int64_t{j} * kGroups;
      if (i >= share.items) break;
      const Item it = item_of(share, i, p.k);
      for (std::int64_t c = 0; c < it.columns; ++c)
        prefetch_l2(b + (it.column + c) * p.ldb + it.k0, static_cast<std::uint32_t>(it.k * 2));
    }
  }
  for (std::int64_t i = t; i < kRows * columns; i += kThreads) sums[i] = 0.0f;
  begin_dependent_kernel();
  __syncthreads();
  if (kSharedA && t == 0) {
    stage_barrier_expect(a_landed, static_cast<unsigned>(p.m * p.k * 2));
    for (int r = 0; r < p.m; ++r)
      stage_copy(a_shared + r * p.k, static_cast<const T*>(p.a) + r * p.lda,
                 static_cast<unsigned>(p.k * 2), a_landed);
  }
  if (issuer)
    for (int j = 0; j < depth; ++j) start(j);
  if constexpr (kSharedA) stage_barrier_wait(a_landed, 0);
  float a_held[kAVectors][8];
  if constexpr (kRegisterA) {
    // The group's k range: its slice, g % slices (register_a_fits), or all of K.
    const std::int64_t k0 = (group % share.slices) * share.slice;
    const std::int64_t held = (p.k - k0 < share.slice ? p.k - k0 : share.slice) / 8;
#pragma unroll
    for (int j = 0; j < kAVectors; ++j) {
      const std::int64_t v = group_lane + j * kGroupLanes;
      Vec<T> x;
      if (v < held) x = load_vec(static_cast<const T*>(p.a) + k0 + v * 8);
#pragma unroll
      for (int e = 0; e < 8; ++e) a_held[j][e] = v < held ? to_float(x.v[e]) : 0.0f;
    }
  }

  for (std::int64_t n = 0; group + n * kGroups < share.items; ++n) {
    const std::int64_t i = group + n * kGroups;
    const int s = stage_of(n);
    stage_barrier_wait(full[s], static_cast<unsigned>((n / depth) & 1));
    const Item it = item_of(share, i, p.k);
    const auto* stage = reinterpret_cast<const uint4*>(smem + std::int64_t{s} * kStageBytes);
    const std::int64_t vectors = it.k / 8;
    // a's rows past M read the last one again, so that the loads need no predicate; their sums
    // are never added.
    const uint4* a_rows[kRows > 0 ? kRows : 1];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = r < p.m ? r : p.m - 1;
      a_rows[r] = reinterpret_cast<const uint4*>(kSharedA ? a_shared + row * p.k + it.k0
                                                          : static_cast<const T*>(p.a) +
                                                                row * p.lda + it.k0);
    }
    for (std::int64_t c = 0; c < it.columns && kRegisterA; ++c) {
      const uint4* column = stage + c * vectors;
      uint4 w[kAVectors];
#pragma unroll
      for (int j = 0; j < kAVectors; ++j) {
        const std::int64_t v = group_lane + j * kGroupLanes;
        w[j] = v < vectors ? column[v] : make_uint4(0, 0, 0, 0);
      }
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kAVectors; ++j) sum += dot8<T>(w[j], a_held[j], 0.0f);
      const float total = warp_sum(sum);
      if (lane == 0) atomicAdd(&sums[it.column - share.first + c], total);
    }
    for (std::int64_t c = 0; c < it.columns && kRows > 0 && !kRegisterA; ++c) {
      const uint4* column = stage + c * vectors;
      // One sum per vector in flight and row: kUnroll independent chains of 8 products, not one
      // chain of 8 kUnroll.
      float sums_u[kUnroll][kRows > 0 ? kRows : 1] = {};
      for (std::int64_t v0 = group_lane; v0 < vectors; v0 += kGroupLanes * kUnroll) {
        uint4 w[kUnroll], x[kUnroll][kRows > 0 ? kRows : 1];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t v = v0 + kGroupLanes * u;
          const bool in = v < vectors;
          w[u] = in ? column[v] : make_uint4(0, 0, 0, 0);
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            x[u][r] = !in ? make_uint4(0, 0, 0, 0) : kSharedA ? a_rows[r][v] : __ldg(a_rows[r] + v);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int r = 0; r < kRows; ++r) sums_u[u][r] = dot8<T>(w[u], x[u][r], sums_u[u][r]);
      }
      float sum[kRows > 0 ? kRows : 1] = {};
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int r = 0; r < kRows; ++r) sum[r] += sums_u[u][r];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float total = warp_sum(sum[r]);
        if (lane == 0 && r < p.m)
          atomicAdd(&sums[r * columns + it.column - share.first + c], total);
      }
    }
    if constexpr (kGroup > 1) {
      // Every member's reads of the stage before its refill: named barrier 1 + group.
      asm volatile("bar.sync %0, %1;" ::"r"(1 + group), "r"(kGroupLanes) : "memory");
    } else {
      __syncwarp();
    }
    if (issuer) {
      // The stage's reads (generic proxy) before the next copy into it (async proxy).
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      start(n + depth);
    }
  }
  __syncthreads();
  if constexpr (kRows > 0) {
    for (std::int64_t i = t; i < p.m * columns; i += kThreads) {
      const std::int64_t r = i / columns, c = i % columns, column = share.first + c;
      float v = sums[r * columns + c];
      if (p.bias) v += to_float(static_cast<const T*>(p.bias)[column]);
      static_cast<T*>(p.out)[r * p.n + column] = from_float<T>(v);
    }
  }
}

}  // namespace tileops::kernels::cuda
