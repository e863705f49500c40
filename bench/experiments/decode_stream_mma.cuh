// An experiment, not part of the library: the streamed decode GEMM of decode_stream.cuh with the
// decode kernel's tensor-core product (Note [Decode GEMM] in kernels/gemm/cuda/decode_gemm.cuh)
// and split-K across blocks, so that every SM streams an even share of the weight for up to 16
// rows of a. Swept by bench/experiments/decode_gemm.cu; not yet run on the H200 (its partition of
// the items was checked on the host).
//
// Note [Streamed decode GEMM on tensor cores]
// The streamed kernel's product on CUDA cores (Note [Streamed decode GEMM]) costs about 26 warp
// instructions for each 512 bytes of weight at one row, and four rows cost four times the loads of
// a: at one row it loses 3 us to its copies alone, at four rows it is 1.6-5x slower than cuBLAS
// (bench/results/2026-12-04-h200-streamed-decode-gemm.md). mma.sync m16n8k16 takes a warp's 512
// bytes of weight (8 columns x 32 k) in two instructions whatever the rows up to 16, with one
// 16-byte load of the weight and one or two of a a lane.
//   - An item is 8 columns (one instruction's n) x kSliceK of k, the 8 columns copied into one
//     stage, each padded by 64 bytes: lane (g, q) reads column g at k 32s + 8q, and without the
//     pad the eight columns of a quarter-warp's 16-byte loads fall on the same banks.
//   - Items are numbered group-major (8-column group, then k slice) and each block takes an even
//     run of them, so a block's bytes differ by at most one item; the groups at either end of a
//     run are shared with the neighbouring blocks (split K). With `whole_groups` a block takes an
//     even run of whole groups instead: no group is shared and no workspace is needed, and the
//     runs differ by one group (at Llama's products the longest run is 1-3% past the mean). A
//     block's warps take its items in turn through stages of their own (as decode_stream.cuh) and
//     add each item's sums into the block's sums in shared memory.
//   - At the end a block writes the groups wholly its own, and adds the others into a float32
//     workspace with atomics; the last block to arrive at such a group (a counter per group)
//     reads the workspace back with atomicExch (leaving it zero for the next call), adds the bias,
//     rounds once and stores, and zeroes the counter. The workspace and the counters must be zero
//     before the first call.
//   - a's M rows are copied into shared memory once (each row padded by 64 bytes, as the stages);
//     the instruction's rows past M read row M - 1 and are never stored.
// Requirements: M <= 16 (kUpperRows for M > 8), 16-bit types, b column-major with K and ldb
// multiples of 8, a and b 16-byte aligned, lda a multiple of 8; the grid no larger than the items
// (with whole_groups, than the groups);
// the stages and a within the block's shared memory.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm/cuda/decode_gemm.cuh"
#include "kernels/gemm/cuda/decode_stream.cuh"

namespace tileops::kernels::cuda {

namespace decode_stream_mma {

constexpr int kPad = 32;  // elements after each staged column and row of a: 64 bytes

// Items: 8-column groups x k slices of slice_k, numbered group-major.
struct Items {
  std::int64_t slices, slice_k, count;
};

__host__ __device__ inline Items items_of(std::int64_t n, std::int64_t k, std::int64_t slice_k) {
  const std::int64_t slices = (k + slice_k - 1) / slice_k;
  return {slices, slice_k, (n + 7) / 8 * slices};
}

// The first item of block b of `blocks` (an even run each), and the block holding item i.
__host__ __device__ inline std::int64_t run_start(std::int64_t items, std::int64_t b,
                                                  std::int64_t blocks) {
  return items * b / blocks;
}
__host__ __device__ inline std::int64_t block_of(std::int64_t items, std::int64_t i,
                                                 std::int64_t blocks) {
  return ((i + 1) * blocks - 1) / items;
}

// Dynamic shared memory: the stages, a's rows, the barriers (one a stage and a's), the block's sums
// (16 rows x 8 columns x the groups a run can touch).
__host__ __device__ inline std::int64_t shared_bytes(int stages, std::int64_t slice_k, int m,
                                                     std::int64_t k, std::int64_t groups) {
  return stages * 8 * (slice_k + kPad) * 2 + m * (k + kPad) * 2 + (stages + 1) * 8 +
         16 * 8 * groups * 4;
}

// The most groups one block's run can touch.
__host__ __device__ inline std::int64_t groups_per_run(const Items& it, std::int64_t blocks) {
  const std::int64_t run = (it.count + blocks - 1) / blocks;
  return (run + it.slices - 1) / it.slices + 1;
}

}  // namespace decode_stream_mma

template <class T, int kSliceK, int kWarps, int kUnroll, bool kUpperRows>
__global__ void __launch_bounds__(32 * kWarps)
    decode_stream_mma_kernel(const DecodeGemmProblem p, float* work, unsigned* arrivals, int depth,
                             bool whole_groups) {
  using namespace decode_stream_mma;
  constexpr int kThreads = 32 * kWarps;
  constexpr std::int64_t kStageElements = 8 * (kSliceK + kPad);
  extern __shared__ __align__(128) unsigned char smem[];
  const Items items = items_of(p.n, p.k, kSliceK);
  const std::int64_t blocks = gridDim.x;
  // An even run of items, or with whole_groups an even run of 8-column groups (then no group is
  // shared, the workspace is not touched, and the runs differ by up to one group).
  const std::int64_t first =
      whole_groups ? run_start(items.count / items.slices, blockIdx.x, blocks) * items.slices
                   : run_start(items.count, blockIdx.x, blocks);
  const std::int64_t end =
      whole_groups ? run_start(items.count / items.slices, blockIdx.x + 1, blocks) * items.slices
                   : run_start(items.count, blockIdx.x + 1, blocks);
  const std::int64_t group0 = first / items.slices;
  const int groups = static_cast<int>((end - 1) / items.slices - group0 + 1);
  const int stages = kWarps * depth;
  T* stage_base = reinterpret_cast<T*>(smem);
  const std::int64_t a_stride = p.k + kPad;
  T* a_shared = stage_base + stages * kStageElements;
  auto* full = reinterpret_cast<StageBarrier*>(a_shared + p.m * a_stride);
  StageBarrier& a_landed = full[stages];
  auto* sums = reinterpret_cast<float*>(full + stages + 1);  // [16][groups][8]
  const int t = static_cast<int>(threadIdx.x), warp = t / 32, lane = t % 32;
  const int g = lane / 4, q = lane % 4;
  const T* b = static_cast<const T*>(p.b);

  const auto k0_of = [&](std::int64_t i) { return (i % items.slices) * kSliceK; };
  const auto k_of = [&](std::int64_t i) {
    const std::int64_t k0 = k0_of(i);
    return p.k - k0 < kSliceK ? p.k - k0 : std::int64_t{kSliceK};
  };
  // Warp w takes its run's items first + w, first + w + kWarps, ...; its n-th goes to its stage
  // n % depth. Columns past N copy the last column again (never stored).
  const auto start = [&](std::int64_t n) {
    const std::int64_t i = first + warp + n * kWarps;
    if (i >= end) return;
    const int s = warp * depth + static_cast<int>(n % depth);
    const std::int64_t k0 = k0_of(i), kn = k_of(i), col0 = i / items.slices * 8;
    T* stage = stage_base + s * kStageElements;
    stage_barrier_expect(full[s], static_cast<unsigned>(8 * kn * 2));
    for (int c = 0; c < 8; ++c) {
      const std::int64_t col = col0 + c < p.n ? col0 + c : p.n - 1;
      stage_copy(stage + c * (kSliceK + kPad), b + col * p.ldb + k0, static_cast<unsigned>(kn * 2),
                 full[s], true);
    }
  };

  if (t == 0) decode_stream::barrier_init(a_landed, 1);
  if (lane == 0) {
    for (int j = 0; j < depth; ++j) decode_stream::barrier_init(full[warp * depth + j], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int j = 0; j < depth; ++j) {
      const std::int64_t i = first + warp + std::int64_t{j} * kWarps;
      if (i >= end) break;
      const std::int64_t col0 = i / items.slices * 8;
      for (int c = 0; c < 8 && col0 + c < p.n; ++c)
        prefetch_l2(b + (col0 + c) * p.ldb + k0_of(i), static_cast<std::uint32_t>(k_of(i) * 2));
    }
  }
  for (int i = t; i < 16 * groups * 8; i += kThreads) sums[i] = 0.0f;
  begin_dependent_kernel();
  __syncthreads();
  if (t == 0) {
    stage_barrier_expect(a_landed, static_cast<unsigned>(p.m * p.k * 2));
    for (int r = 0; r < p.m; ++r)
      stage_copy(a_shared + r * a_stride, static_cast<const T*>(p.a) + r * p.lda,
                 static_cast<unsigned>(p.k * 2), a_landed);
  }
  if (lane == 0)
    for (int j = 0; j < depth; ++j) start(j);
  stage_barrier_wait(a_landed, 0);

  const T* a_lower = a_shared + (g < p.m ? g : p.m - 1) * a_stride + 8 * q;
  const T* a_upper = a_shared + (g + 8 < p.m ? g + 8 : p.m - 1) * a_stride + 8 * q;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (std::int64_t n = 0; first + warp + n * kWarps < end; ++n) {
    const std::int64_t i = first + warp + n * kWarps;
    const int s = warp * depth + static_cast<int>(n % depth);
    stage_barrier_wait(full[s], static_cast<unsigned>((n / depth) & 1));
    const std::int64_t k0 = k0_of(i), kn = k_of(i);
    const T* column = stage_base + s * kStageElements + g * (kSliceK + kPad) + 8 * q;
    float acc[4] = {};
    const std::int64_t steps = (kn + 31) / 32;
    for (std::int64_t s0 = 0; s0 < steps; s0 += kUnroll) {
      uint4 w[kUnroll], lower[kUnroll], upper[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t k = (s0 + u) * 32;
        const bool in = s0 + u < steps && k + 8 * q < kn;
        w[u] = in ? *reinterpret_cast<const uint4*>(column + k) : zero;
        lower[u] = in ? *reinterpret_cast<const uint4*>(a_lower + k0 + k) : zero;
        upper[u] = kUpperRows && in ? *reinterpret_cast<const uint4*>(a_upper + k0 + k) : zero;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        decode_gemm::mma<T>(acc, lower[u].x, upper[u].x, lower[u].y, upper[u].y, w[u].x, w[u].y);
        decode_gemm::mma<T>(acc, lower[u].z, upper[u].z, lower[u].w, upper[u].w, w[u].z, w[u].w);
      }
    }
    // Lane (g, q) holds rows g and g + 8 of the group's columns 2q and 2q + 1.
    float* group_sums = sums + (i / items.slices - group0) * 8;
    if (g < p.m) {
      atomicAdd(&group_sums[g * groups * 8 + 2 * q], acc[0]);
      atomicAdd(&group_sums[g * groups * 8 + 2 * q + 1], acc[1]);
    }
    if (kUpperRows && g + 8 < p.m) {
      atomicAdd(&group_sums[(g + 8) * groups * 8 + 2 * q], acc[2]);
      atomicAdd(&group_sums[(g + 8) * groups * 8 + 2 * q + 1], acc[3]);
    }
    __syncwarp();
    if (lane == 0) {
      // The stage's reads (generic proxy) before the next copy into it (async proxy).
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      start(n + depth);
    }
  }
  __syncthreads();

  // A group is the block's own when its first and last items are in the run.
  const auto own = [&](std::int64_t group) {
    return group * items.slices >= first && (group + 1) * items.slices <= end;
  };
  const T* bias = static_cast<const T*>(p.bias);
  T* out = static_cast<T*>(p.out);
  for (int x = t; x < p.m * groups * 8; x += kThreads) {
    const int row = x / (groups * 8), gl = x / 8 % groups, c = x % 8;
    const std::int64_t col = (group0 + gl) * 8 + c;
    if (col >= p.n) continue;
    const float v = sums[(row * groups + gl) * 8 + c];
    if (own(group0 + gl))
      out[row * p.n + col] = from_float<T>(v + (bias ? to_float(bias[col]) : 0.0f));
    else
      atomicAdd(&work[row * p.n + col], v);
  }
  // At most the first and the last group are shared; thread j < 2 counts this block in group j's.
  __shared__ bool finish[2];
  __threadfence();
  __syncthreads();
  if (t < 2) {
    const std::int64_t group = t == 0 ? group0 : group0 + groups - 1;
    finish[t] = false;
    if (!own(group) && (t == 0 || groups > 1)) {
      const std::int64_t touching = block_of(items.count, (group + 1) * items.slices - 1, blocks) -
                                    block_of(items.count, group * items.slices, blocks) + 1;
      finish[t] = atomicAdd(&arrivals[group], 1u) == static_cast<unsigned>(touching - 1);
    }
  }
  __syncthreads();
  for (int j = 0; j < 2; ++j) {
    if (!finish[j]) continue;
    __threadfence();
    const std::int64_t group = j == 0 ? group0 : group0 + groups - 1;
    for (int x = t; x < p.m * 8; x += kThreads) {
      const int row = x / 8, c = x % 8;
      const std::int64_t col = group * 8 + c;
      if (col >= p.n) continue;
      const float v = atomicExch(&work[row * p.n + col], 0.0f);
      out[row * p.n + col] = from_float<T>(v + (bias ? to_float(bias[col]) : 0.0f));
    }
    if (t == 0) arrivals[group] = 0;
  }
}

}  // namespace tileops::kernels::cuda
