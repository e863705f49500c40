// An experiment, not part of the library: RMSNorm and LayerNorm rows streamed through a ring of
// shared-memory stages by persistent blocks, beside the library's register and staged kernels, a
// copy kernel and cudaMemcpyAsync of the same bytes, all launched as dependent kernels and timed
// by CUDA-graph replays over sets rotated beyond the L2 (median), or with `bench` in the batches
// `tileops bench` times (host-launched from 32 MiB a call; both agree within 2 points:
// bench/results/2026-12-04-h200-fixed-rows-prefetch-ab.md).
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude -Isrc \
//        bench/experiments/norm_ring.cu -o build/norm_ring && build/norm_ring [MODE] [shapes]
//        [bench]
//
// MODE: `lean` (default) the fixed-length block-per-row variants; `ring` the ring of stages;
// `staged` the fixed-length kernel with its row staged in shared memory by a bulk copy;
// `affine` the weight and bias asked for with the row (registers or cp.async into shared memory);
// `ahead` every row asked for into L2 by the first wave's blocks; `prefetch` the fixed shapes
// with and without their row asked for before the dependent wait (all blocks, none, or the first
// wave's). Results: bench/results/2026-12-03-h200-norm-fixed-rows.md,
// bench/results/2026-12-03-h200-prefetch-before-wait.md and
// bench/results/2026-12-04-h200-fixed-rows-prefetch-ab.md.
//
// Why: at the 2048-row prefill shapes a block that holds one row (in registers or one staged
// copy) asks for its row, waits, reduces and stores, and the SM's few resident blocks leave DRAM
// idle while their reductions run; a copy of the same bytes reaches 10 points more of the 4.25
// TB/s. A persistent block with `stages` rows in flight asks for row i + stages as soon as every
// thread has read row i (after the first block reduction), so its loads stay in flight through
// the reductions and stores of the rows before, and the weight and bias are staged once per block
// rather than read again for every row.
// Each variant is checked against a float64 reference on rows spread over the whole call (the last
// included), the output poisoned with NaN before the checked launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/norm_rows.cuh"
#include "kernels/common/cuda/staged_rows.cuh"
#include "kernels/norm/cuda/norm.cuh"
#include "kernels/norm/cuda/norm_fixed.cuh"
#include "kernels/norm/cuda/norm_staged.cuh"

using namespace tileops::kernels::cuda;
using namespace experiments::norm_rows;
using T = __nv_bfloat16;
using V = Vec<T>;
constexpr int kN = V::kSize;
constexpr int kMaxStages = 8;

// The blocks one wave of the kernel being timed places (lean, kAhead -1).
__device__ int g_first_wave;

// One thread: an asynchronous 16-byte copy from global to shared memory (cp.async, L2 only).
__device__ __forceinline__ void copy_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst)), "l"(src)
               : "memory");
}

// Persistent: block b takes rows b, b + grid, b + 2 grid, ...; stage s of its ring holds its rows
// s, s + stages, ... Thread 0 starts every copy; a stage is refilled once the block's first
// reduction of its row has returned (every thread has then read the row into registers).
template <NormKind kKind, int kVpt>
__global__ void __launch_bounds__(1024) ring_norm_kernel(NormParams p, int stages) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ StageBarrier full[kMaxStages];
  __shared__ StageBarrier affine;
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const int n_vec = static_cast<int>(p.n / kN);
  const auto row_bytes = static_cast<unsigned>(p.n * static_cast<long long>(sizeof(T)));
  V* ring = reinterpret_cast<V*>(smem);
  V* ws = ring + static_cast<long long>(stages) * n_vec;
  V* bs = ws + n_vec;
  const bool weighted = p.weight != nullptr;
  const bool biased = kKind == NormKind::kLayer && p.bias != nullptr;
  const long long grid = gridDim.x;
  const long long block = blockIdx.x;
  const long long my_rows = block < p.rows ? (p.rows - 1 - block) / grid + 1 : 0;
  const T* x = static_cast<const T*>(p.x);
  const auto row_of = [&](long long i) { return block + i * grid; };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) stage_barrier_init(full[s]);
    stage_barrier_init(affine);
    // The weight and bias are not the previous kernel's outputs: staged before the wait.
    stage_barrier_expect(affine, (weighted ? row_bytes : 0u) + (biased ? row_bytes : 0u));
    if (weighted) stage_copy(ws, p.weight, row_bytes, affine);
    if (biased) stage_copy(bs, p.bias, row_bytes, affine);
    for (long long i = 0; i < stages && i < my_rows; ++i)
      prefetch_l2(x + row_of(i) * p.n, row_bytes);
  }
  __syncthreads();  // the barriers are initialised
  begin_dependent_kernel();
  if (threadIdx.x == 0)
    for (int s = 0; s < stages && s < my_rows; ++s) {
      stage_barrier_expect(full[s], row_bytes);
      stage_copy(ring + static_cast<long long>(s) * n_vec, x + row_of(s) * p.n, row_bytes, full[s],
                 /*evict_first=*/true);
    }
  stage_barrier_wait(affine, 0);
  const float inv_n = 1.0f / static_cast<float>(p.n);
  const auto refill = [&](long long i, int s) {
    if (threadIdx.x == 0 && i + stages < my_rows) {
      stage_barrier_expect(full[s], row_bytes);
      stage_copy(ring + static_cast<long long>(s) * n_vec, x + row_of(i + stages) * p.n, row_bytes,
                 full[s], /*evict_first=*/true);
    }
  };
  for (long long i = 0; i < my_rows; ++i) {
    const int s = static_cast<int>(i % stages);
    stage_barrier_wait(full[s], static_cast<unsigned>((i / stages) & 1));
    const V* row = ring + static_cast<long long>(s) * n_vec;
    V xv[kVpt];
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
      xv[j] = v < n_vec ? row[v] : zero_vec<T>();
    }
    RowScale rs;
    if constexpr (kKind == NormKind::kLayer) {
      const float2 sums = block_sum(sums_and_squares(xv), pair_storage);
      refill(i, s);
      const float mean = sums.x * inv_n;
      float variance = 0.0f;
      if (!variance_from_moments<T>(mean, sums.y * inv_n, &variance)) {
        const float centered = centered_squares(xv, mean, [&](int j) {
          return static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x) < n_vec;
        });
        variance = block_sum(centered, storage) * inv_n;
      }
      rs = {mean, rsqrtf(variance + p.eps)};
    } else {
      rs = {0.0f, rsqrtf(block_sum(sum_of_squares(xv), storage) * inv_n + p.eps)};
      refill(i, s);
    }
    T* out = static_cast<T*>(p.out) + row_of(i) * p.n;
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
      if (v >= n_vec) continue;
      const V w = weighted ? ws[v] : V{};
      const V b = biased ? bs[v] : V{};
      store_vec_streaming(out + static_cast<long long>(v) * kN,
                          normalized(xv[j], w, b, weighted, biased, rs));
    }
  }
}

// A block per row as the library's register kernel, with the row's length, the threads, the
// vectors a thread holds and the blocks per SM the compiler must fit (kMinBlocks, the register
// cap) fixed at compile time, and offsets within a row in 32 bits. Without kReduce the block
// reduction is skipped (each thread scales by its own sum: wrong results, timed only) to show
// what the reduction's barriers cost.
// With kRuntimeN the row's length is read from the parameters (each access then checked against
// it), as the library's kernel reads it.
// With kNullable the weight and bias are read only where their pointers are set (the library's
// fixed kernel takes optional affine tensors so).
// kAffine says when the weight and bias are asked for: 0 after the reduction (the library's
// fixed kernel), 1 into registers with the row, 2 into shared memory with the row by per-thread
// asynchronous copies (cp.async, no registers held), so that their L2 latency overlaps the
// row's DRAM latency rather than following the reduction.
template <NormKind kKind, int kVpt, int kThreads, int kMinBlocks, bool kReduce,
          bool kRuntimeN = false, bool kNullable = false, int kAffine = 0, int kAhead = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocks > 0 ? kMinBlocks : 1)
    lean_rows_kernel(NormParams p) {
  constexpr bool kBiasedAffine = kKind == NormKind::kLayer;
  __shared__ __align__(16)
      V affine_smem[kAffine == 2 ? (kBiasedAffine ? 2 : 1) * kVpt * kThreads : 1];
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const int kVec = kRuntimeN ? static_cast<int>(p.n / kN) : kVpt * kThreads;  // the row's vectors
  const T* x = static_cast<const T*>(p.x) + static_cast<long long>(blockIdx.x) * kVec * kN;
  T* out = static_cast<T*>(p.out) + static_cast<long long>(blockIdx.x) * kVec * kN;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  if constexpr (kAhead == 1) {
    if (threadIdx.x == 0) prefetch_l2(x, kVec * 16);
  } else if constexpr (kAhead == -1) {
    // Only the blocks of the first wave, the ones that may be placed while the previous kernel
    // still runs: a later block starts after the previous kernel has ended and loads at once.
    if (threadIdx.x == 0 && static_cast<int>(blockIdx.x) < g_first_wave) prefetch_l2(x, kVec * 16);
  } else if constexpr (kAhead > 1) {
    // Block b asks for rows [b kAhead, (b + 1) kAhead): the first rows / kAhead blocks, placed
    // in the first wave, bring every row of the call into L2 while the blocks of the later waves
    // are not yet running.
    if (threadIdx.x == 0)
      prefetch_rows_l2(p.x, static_cast<long long>(blockIdx.x) * kAhead, kAhead, p.rows, kVec * 16);
  }
  begin_dependent_kernel();
  V xv[kVpt];
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int v = static_cast<int>(threadIdx.x) + j * kThreads;
    xv[j] = !kRuntimeN || v < kVec ? load_vec_streaming(x + v * kN) : zero_vec<T>();
  }
  V wv[kAffine == 1 ? kVpt : 1], bv[kAffine == 1 ? kVpt : 1];
  if constexpr (kAffine == 1) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int at = (static_cast<int>(threadIdx.x) + j * kThreads) * kN;
      wv[j] = load_vec(weight + at);
      if constexpr (kBiasedAffine) bv[j] = load_vec(bias + at);
    }
  } else if constexpr (kAffine == 2) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = static_cast<int>(threadIdx.x) + j * kThreads;
      copy_async_16(&affine_smem[v], weight + v * kN);
      if constexpr (kBiasedAffine) copy_async_16(&affine_smem[kVpt * kThreads + v], bias + v * kN);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  const float kInvN = 1.0f / static_cast<float>(kVec * kN);
  RowScale rs;
  if constexpr (kKind == NormKind::kLayer) {
    float2 sums = sums_and_squares(xv);
    if constexpr (kReduce)
      sums = block_sum(sums, pair_storage);
    else
      sums = {sums.x * kThreads, sums.y * kThreads};
    const float mean = sums.x * kInvN;
    float variance = 0.0f;
    if (!variance_from_moments<T>(mean, sums.y * kInvN, &variance)) {
      const float centered = centered_squares(xv, mean, [](int) { return true; });
      variance = (kReduce ? block_sum(centered, storage) : centered * kThreads) * kInvN;
    }
    rs = {mean, rsqrtf(variance + p.eps)};
  } else {
    float squares = sum_of_squares(xv);
    if constexpr (kReduce)
      squares = block_sum(squares, storage);
    else
      squares *= kThreads;
    rs = {0.0f, rsqrtf(squares * kInvN + p.eps)};
  }
#pragma unroll
  for (int j = 0; j < kVpt; ++j) opaque(xv[j]);
  constexpr bool kBiased = kKind == NormKind::kLayer;
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int v = static_cast<int>(threadIdx.x) + j * kThreads;
    if (kRuntimeN && v >= kVec) continue;
    const int at = v * kN;
    if constexpr (kNullable) {
      V w{}, b{};
      if (weight) w = load_vec(weight + at);
      if (kBiased && bias) b = load_vec(bias + at);
      store_vec_streaming(
          out + at, normalized(xv[j], w, b, weight != nullptr, kBiased && bias != nullptr, rs));
    } else if constexpr (kAffine == 1) {
      store_vec_streaming(out + at, normalized(xv[j], wv[j], bv[j], true, kBiased, rs));
    } else if constexpr (kAffine == 2) {
      if (j == 0) asm volatile("cp.async.wait_all;" ::: "memory");
      const V w = affine_smem[v];
      const V b = kBiased ? affine_smem[kVpt * kThreads + v] : V{};
      store_vec_streaming(out + at, normalized(xv[j], w, b, true, kBiased, rs));
    } else {
      const V w = load_vec(weight + at);
      const V b = kBiased ? load_vec(bias + at) : V{};
      store_vec_streaming(out + at, normalized(xv[j], w, b, true, kBiased, rs));
    }
  }
}

// The fixed-length kernel with the row staged in shared memory by one bulk copy (Note [Staged
// rows] in staged_rows.cuh) instead of held in registers: the bytes in flight then cost no
// registers, so an SM holds as many rows in flight as its threads and shared memory allow (16
// rows of 8 KB at 128 threads), where the register kernel holds 6 (2048 x 4096, 2 vectors x 256
// threads at 37 registers). Each pass reads the row from shared memory. With kBulkStore the
// normalized row is written back over the staged one and leaves by one bulk copy to global.
template <NormKind kKind, int kVpt, int kThreads, int kMinBlocks, bool kBulkStore>
__global__ void __launch_bounds__(kThreads, kMinBlocks > 0 ? kMinBlocks : 1)
    fixed_staged_kernel(NormParams p) {
  constexpr int kVec = kVpt * kThreads;
  constexpr unsigned kRowBytes = kVec * 16u;
  constexpr float kInvN = 1.0f / static_cast<float>(kVec * kN);
  __shared__ __align__(128) V staged[kVec];
  __shared__ StageBarrier full;
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const T* x = static_cast<const T*>(p.x) + static_cast<long long>(blockIdx.x) * kVec * kN;
  T* out = static_cast<T*>(p.out) + static_cast<long long>(blockIdx.x) * kVec * kN;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  if (threadIdx.x == 0) {
    stage_barrier_init(full);
    prefetch_l2(x, kRowBytes);
  }
  __syncthreads();  // the barrier is initialised
  begin_dependent_kernel();
  if (threadIdx.x == 0) {
    stage_barrier_expect(full, kRowBytes);
    stage_copy(staged, x, kRowBytes, full, /*evict_first=*/true);
  }
  stage_barrier_wait(full, 0);
  V xv[kVpt];
#pragma unroll
  for (int j = 0; j < kVpt; ++j) xv[j] = staged[threadIdx.x + j * kThreads];
  RowScale rs;
  if constexpr (kKind == NormKind::kLayer) {
    const float2 sums = block_sum(sums_and_squares(xv), pair_storage);
    const float mean = sums.x * kInvN;
    float variance = 0.0f;
    if (!variance_from_moments<T>(mean, sums.y * kInvN, &variance)) {
#pragma unroll
      for (int j = 0; j < kVpt; ++j) xv[j] = staged[threadIdx.x + j * kThreads];
      variance = block_sum(centered_squares(xv, mean, [](int) { return true; }), storage) * kInvN;
    }
    rs = {mean, rsqrtf(variance + p.eps)};
  } else {
    rs = {0.0f, rsqrtf(block_sum(sum_of_squares(xv), storage) * kInvN + p.eps)};
  }
  constexpr bool kBiased = kKind == NormKind::kLayer;
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int v = static_cast<int>(threadIdx.x) + j * kThreads;
    const V w = load_vec(weight + v * kN);
    const V b = kBiased ? load_vec(bias + v * kN) : V{};
    const V y = normalized(staged[v], w, b, true, kBiased, rs);
    if constexpr (kBulkStore)
      staged[v] = y;
    else
      store_vec_streaming(out + v * kN, y);
  }
  if constexpr (kBulkStore) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out),
                   "r"(shared_address(staged)), "r"(kRowBytes)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
  }
}

// The same bytes copied (x -> out), four 16-byte vectors a thread, as a dependent kernel.
__global__ void __launch_bounds__(256) copy_kernel(const V* src, V* dst, long long vectors) {
  begin_dependent_kernel();
  const long long first = static_cast<long long>(blockIdx.x) * 1024 + threadIdx.x;
  V v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (first + 256 * j < vectors) v[j] = load_vec_streaming(&src[first + 256 * j].v[0]);
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (first + 256 * j < vectors) store_vec_streaming(&dst[first + 256 * j].v[0], v[j]);
}

void launch_dependent(const void* kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                      void** args) {
  experiments::launch_kernel(kernel, grid, block, smem, stream, args);
}

const char* kind_name(NormKind k) { return k == NormKind::kRMS ? "rms" : "layer"; }

// Max error in bfloat16 steps over rows spread across the call, the last included.
template <NormKind kKind>
double check_spread(const Shape& s, Buffers& b) {
  std::vector<long long> rows;
  const long long stride = std::max(1LL, s.rows / 48);
  for (long long r = 0; r < s.rows; r += stride) rows.push_back(r);
  rows.push_back(s.rows - 1);
  return check_rows<kKind>(s, b, rows);
}

struct Row {
  std::string name;
  double us;
  double err;
};

void print(NormKind kind, const Shape& s, const Row& r, double bytes) {
  std::printf("%-6s %-34s [%6lld, %5d] %9.2f us %8.1f GB/s %6.1f%%  err %.2f\n", kind_name(kind),
              r.name.c_str(), s.rows, s.n, r.us, bytes / r.us / 1e3,
              bytes / r.us / 1e3 / 4250 * 100, r.err);
}

// With `bench`, batches are timed as `tileops bench` times them (Note [CUDA bench] in
// tools/bench_cuda.cpp): whole rotations of the sets lasting about a millisecond (at most 64),
// replayed from a graph only below 32 MiB a call, host-launched otherwise; without it, batches of
// max(20, 2 sets) launches replayed from a graph.
bool g_bench_timing = false;

// Launch once on poisoned output, check, then time.
template <NormKind kKind, class Launch>
Row measure(const std::string& name, const Shape& s, Buffers& b, int sets, cudaStream_t stream,
            Launch&& launch, bool check = true) {
  CHECK(cudaMemset(b.out[0], 0xff, s.rows * s.n * sizeof(T)));
  launch(0);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());
  const double err = check ? check_spread<kKind>(s, b) : 0.0;
  double us = experiments::median_launch_us(launch, sets, std::max(20, 2 * sets), stream, true);
  if (g_bench_timing) {
    const double call_bytes = (2.0 * s.rows * s.n + s.n) * sizeof(T);  // x, out, weight
    const int rotations = std::clamp(static_cast<int>(std::ceil(1000.0 / (us * sets))), 1, 64);
    us = experiments::median_launch_us(launch, sets, rotations * sets, stream,
                                       call_bytes < 32.0 * (1 << 20));
  }
  return {name, us, err};
}

template <NormKind kKind, int kVpt>
void ring(const Shape& s, Buffers& b, int sets, cudaStream_t stream, int sms, double bytes) {
  auto kernel = ring_norm_kernel<kKind, kVpt>;
  const int n_vec = s.n / kN;
  const int threads = std::clamp((n_vec / kVpt + 31) / 32 * 32, 32, 1024);
  const int affine_rows = kKind == NormKind::kLayer ? 2 : 1;
  for (int stages : {2, 3, 4, 6}) {
    const int smem = (stages + affine_rows) * s.n * static_cast<int>(sizeof(T));
    if (smem > 227 * 1024) continue;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    for (int bps : {1, 2, 3, 4, 6}) {
      if (bps > per_sm) continue;
      const long long grid = std::min<long long>(s.rows, static_cast<long long>(bps) * sms);
      auto launch = [&, smem, grid](int set) {
        NormParams p = params_of(s, b, set);
        int st = stages;
        void* args[] = {&p, &st};
        launch_dependent(reinterpret_cast<const void*>(kernel), dim3(grid), dim3(threads), smem,
                         stream, args);
      };
      const std::string name = "ring vpt" + std::to_string(kVpt) + " st" + std::to_string(stages) +
                               " " + std::to_string(bps) + "/SM (" + std::to_string(threads) + ")";
      print(kKind, s, measure<kKind>(name, s, b, sets, stream, launch), bytes);
    }
  }
}

template <NormKind kKind, int kVpt, int kThreads, int kMinBlocks, bool kReduce,
          bool kRuntimeN = false, bool kNullable = false, int kAffine = 0, int kAhead = 1>
void lean(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  if (kVpt * kThreads * kN != s.n) return;
  const double bytes = 2.0 * s.rows * s.n * sizeof(T);
  auto kernel = lean_rows_kernel<kKind, kVpt, kThreads, kMinBlocks, kReduce, kRuntimeN, kNullable,
                                 kAffine, kAhead>;
  const experiments::KernelFacts facts = experiments::kernel_facts(kernel, kThreads);
  CHECK(cudaMemcpyToSymbol(g_first_wave, &facts.per_wave, sizeof(int)));
  auto launch = [&](int set) {
    NormParams p = params_of(s, b, set);
    void* args[] = {&p};
    launch_dependent(reinterpret_cast<const void*>(kernel), dim3(s.rows), dim3(kThreads), 0, stream,
                     args);
  };
  const std::string name = std::string(kReduce ? "lean" : "no-reduce") + (kRuntimeN ? "-rt" : "") +
                           (kNullable ? "-nullable" : "") +
                           (kAffine == 1   ? "-wreg"
                            : kAffine == 2 ? "-wsmem"
                                           : "") +
                           (kAhead > 1     ? "-ahead" + std::to_string(kAhead)
                            : kAhead == 0  ? "-noprefetch"
                            : kAhead == -1 ? "-wave1prefetch"
                                           : "") +
                           " vpt" + std::to_string(kVpt) + " t" + std::to_string(kThreads) + " " +
                           std::to_string(facts.registers) + "r" + (facts.spills ? "+spill" : "") +
                           " " + std::to_string(facts.per_sm) + "/SM";
  print(kKind, s, measure<kKind>(name, s, b, sets, stream, launch, kReduce), bytes);
}

template <NormKind kKind>
void lean_all(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  // The shapes of the library's fixed kernel (Note [Fixed rows]), with and without optional affine
  // tensors, measured twice each, alternating.
  for (int round = 0; round < 2; ++round) {
    if constexpr (kKind == NormKind::kRMS) {
      lean<kKind, 2, 256, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, true>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, true>(s, b, sets, stream);
    } else {
      lean<kKind, 4, 128, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, true>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, true>(s, b, sets, stream);
    }
  }
}

template <NormKind kKind, int kVpt, int kThreads, int kMinBlocks, bool kBulkStore>
void staged_fixed(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  if (kVpt * kThreads * kN != s.n) return;
  const double bytes = 2.0 * s.rows * s.n * sizeof(T);
  auto kernel = fixed_staged_kernel<kKind, kVpt, kThreads, kMinBlocks, kBulkStore>;
  const experiments::KernelFacts facts = experiments::kernel_facts(kernel, kThreads);
  auto launch = [&](int set) {
    NormParams p = params_of(s, b, set);
    void* args[] = {&p};
    launch_dependent(reinterpret_cast<const void*>(kernel), dim3(s.rows), dim3(kThreads), 0, stream,
                     args);
  };
  const std::string name = std::string(kBulkStore ? "staged+bulkst" : "staged") + " vpt" +
                           std::to_string(kVpt) + " t" + std::to_string(kThreads) + " " +
                           std::to_string(facts.registers) + "r" + (facts.spills ? "+spill" : "") +
                           " " + std::to_string(facts.per_sm) + "/SM";
  print(kKind, s, measure<kKind>(name, s, b, sets, stream, launch), bytes);
}

// Staged fixed-length shapes for every row length: 64-512 threads, stores from registers or by a
// bulk copy.
template <NormKind kKind>
void staged_all(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  for (int round = 0; round < 2; ++round) {
    staged_fixed<kKind, 8, 64, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 4, 128, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 4, 128, 0, true>(s, b, sets, stream);
    staged_fixed<kKind, 2, 256, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 128, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 128, 0, true>(s, b, sets, stream);
    staged_fixed<kKind, 4, 256, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 2, 512, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 256, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 4, 512, 0, false>(s, b, sets, stream);
    staged_fixed<kKind, 4, 512, 0, true>(s, b, sets, stream);
  }
}

// The affine tensors asked for with the row (registers or shared memory) against after the
// reduction, on the fixed kernel's shapes and a few others; the staged kernel with its registers
// capped for more blocks per SM.
template <NormKind kKind>
void affine_all(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  for (int round = 0; round < 2; ++round) {
    if constexpr (kKind == NormKind::kRMS) {
      lean<kKind, 2, 256, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 1>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 1>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 4, 256, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, false, 2>(s, b, sets, stream);
    } else {
      lean<kKind, 4, 128, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 1>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 2>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, false, 2>(s, b, sets, stream);
    }
    staged_fixed<kKind, 4, 128, 16, false>(s, b, sets, stream);
    staged_fixed<kKind, 4, 128, 12, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 64, 24, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 128, 8, false>(s, b, sets, stream);
    staged_fixed<kKind, 8, 256, 4, false>(s, b, sets, stream);
  }
}

// Every row asked for into L2 by the first wave's blocks (kAhead rows a block), with the weight
// asked for after the reduction or with the row; kAhead 0: no row asked for before the wait.
template <NormKind kKind>
void ahead_all(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  for (int round = 0; round < 2; ++round) {
    if constexpr (kKind == NormKind::kRMS) {
      lean<kKind, 2, 256, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 0, 3>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 0, 4>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 1, 3>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 0, 3>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 1, 2>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, false, 0, 3>(s, b, sets, stream);
    } else {
      lean<kKind, 4, 128, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 0, 3>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 0, 4>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, false, 0, 3>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, false, 0, 2>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, false, 0, 3>(s, b, sets, stream);
    }
  }
}

// The fixed kernel's shapes with and without their row asked for in L2 before the dependent wait.
template <NormKind kKind>
void prefetch_all(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  for (int round = 0; round < 2; ++round) {
    if constexpr (kKind == NormKind::kRMS) {
      lean<kKind, 2, 256, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 2, 256, 0, true, false, false, 0, -1>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 2, 512, 0, true, false, false, 0, -1>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 4, 512, 0, true, false, false, 0, -1>(s, b, sets, stream);
    } else {
      lean<kKind, 4, 128, 0, true>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 4, 128, 0, true, false, false, 0, -1>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 4, 256, 4, true, false, false, 0, -1>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, false, 0, 0>(s, b, sets, stream);
      lean<kKind, 4, 512, 2, true, false, false, 0, -1>(s, b, sets, stream);
    }
  }
}

template <NormKind kKind>
void compare(const Shape& s, Buffers& b, int sets, cudaStream_t stream, int sms,
             const std::string& mode) {
  const double bytes = 2.0 * s.rows * s.n * sizeof(T);
  const int n_vec = s.n / kN;
  {  // the library's register kernel, a block per row
    auto kernel = norm_rows_kernel<kKind, T, 0, 4>;
    const int threads = std::clamp((n_vec / 4 + 31) / 32 * 32, 32, 1024);
    auto launch = [&](int set) {
      NormParams p = params_of(s, b, set);
      void* args[] = {&p};
      launch_dependent(reinterpret_cast<const void*>(kernel), dim3(s.rows), dim3(threads), 0,
                       stream, args);
    };
    print(kKind, s, measure<kKind>("registers (library)", s, b, sets, stream, launch), bytes);
  }
  if (const NormFixedKernel fixed = norm_fixed_kernel<kKind, T>(s.n); fixed.kernels[1] != nullptr) {
    // The library's fixed-length kernel (Note [Fixed rows]), with the weight (and bias).
    const void* kernel = fixed.kernels[kKind == NormKind::kLayer ? 3 : 1];
    auto launch = [&](int set) {
      NormParams p = params_of(s, b, set);
      void* args[] = {&p};
      launch_dependent(kernel, dim3(s.rows), dim3(fixed.threads), 0, stream, args);
    };
    print(kKind, s, measure<kKind>("fixed (library)", s, b, sets, stream, launch), bytes);
  }
  if (kKind == NormKind::kLayer) {  // the library's staged kernel, a block per row
    auto kernel = norm_staged_kernel<kKind, T>;
    const int threads = std::clamp((n_vec / 4 + 31) / 32 * 32, 256, 1024);
    const int smem = s.n * static_cast<int>(sizeof(T));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    auto launch = [&](int set) {
      NormParams p = params_of(s, b, set);
      void* args[] = {&p};
      launch_dependent(reinterpret_cast<const void*>(kernel), dim3(s.rows), dim3(threads), smem,
                       stream, args);
    };
    print(kKind, s, measure<kKind>("staged (library)", s, b, sets, stream, launch), bytes);
  }
  if (mode == "ring") {
    ring<kKind, 2>(s, b, sets, stream, sms, bytes);
    ring<kKind, 4>(s, b, sets, stream, sms, bytes);
  } else if (mode == "staged") {
    staged_all<kKind>(s, b, sets, stream);
  } else if (mode == "affine") {
    affine_all<kKind>(s, b, sets, stream);
  } else if (mode == "ahead") {
    ahead_all<kKind>(s, b, sets, stream);
  } else if (mode == "prefetch") {
    prefetch_all<kKind>(s, b, sets, stream);
  } else {
    lean_all<kKind>(s, b, sets, stream);
  }
}

void copies(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  const double bytes = 2.0 * s.rows * s.n * sizeof(T);
  const long long vectors = s.rows * s.n / kN;
  auto kernel_copy = [&](int set) {
    const V* src = reinterpret_cast<const V*>(b.x[set]);
    V* dst = reinterpret_cast<V*>(b.out[set]);
    long long count = vectors;
    void* args[] = {&src, &dst, &count};
    launch_dependent(reinterpret_cast<const void*>(copy_kernel), dim3((vectors + 1023) / 1024),
                     dim3(256), 0, stream, args);
  };
  print(NormKind::kRMS, s,
        measure<NormKind::kRMS>("copy kernel", s, b, sets, stream, kernel_copy, false), bytes);
  auto memcpy_copy = [&](int set) {
    CHECK(cudaMemcpyAsync(b.out[set], b.x[set], s.rows * s.n * sizeof(T), cudaMemcpyDeviceToDevice,
                          stream));
  };
  print(NormKind::kRMS, s,
        measure<NormKind::kRMS>("cudaMemcpyAsync", s, b, sets, stream, memcpy_copy, false), bytes);
}

int main(int argc, char** argv) {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<Shape> shapes = {
      {2048, 4096}, {2048, 8192}, {2048, 16384}, {16384, 8192}, {4096, 16384}};
  // `ring` sweeps the ring kernel, `staged` the staged fixed-length kernel, `affine` when the
  // weight and bias are asked for, `ahead` rows asked for into L2 ahead of their blocks, `prefetch`
  // the fixed shapes with and without their prefetch; otherwise the lean block-per-row variants. A
  // count after it keeps the first shapes only; `bench` after that times as `tileops bench` does
  // (g_bench_timing).
  const std::string mode = argc > 1 ? argv[1] : "lean";
  if (argc > 2) shapes.resize(std::min<size_t>(shapes.size(), std::atoi(argv[2])));
  g_bench_timing = argc > 3 && std::string(argv[3]) == "bench";
  for (const Shape& s : shapes) {
    const double set_bytes = 2.0 * s.rows * s.n * sizeof(T);
    const int sets = std::min(2048, std::max(2, static_cast<int>(4 * 50e6 / set_bytes) + 1));
    Buffers b = make_pooled(s, sets);
    copies(s, b, sets, stream);
    compare<NormKind::kRMS>(s, b, sets, stream, sms, mode);
    compare<NormKind::kLayer>(s, b, sets, stream, sms, mode);
    release(b);
  }
  return 0;
}
