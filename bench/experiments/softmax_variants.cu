// An experiment, not part of the library: softmax and log_softmax (bfloat16, the last axis, a row
// per block held in registers: the library's register path) written with the knobs that could
// move kernels/reduction/cuda/softmax.cuh closer to the copy ceiling, each timed the way
// `tileops bench` times (inputs rotated beyond 4x the L2, batches of back-to-back launches between
// CUDA events, the median batch), beside a vectorised copy of the same bytes.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude \
//        bench/experiments/softmax_variants.cu -o build/softmax_variants && build/softmax_variants
//
// By default it times the library's kernel (softmax_rows_kernel as its plan launches it) and the
// row read through shared memory by a bulk copy issued a row ahead (tma_kernel); `--all` adds the
// first run's variants of the register path (rows_kernel) and the occupancy runs: one block
// reduction of (max, sum of exponentials) pairs, each thread's sum taken against its own maximum,
// or two (the maximum, then the sum against it, as the library does); the maximum as PTX's
// NaN-propagating max.NaN.f32 or as a compare and select; softmax's exponentials kept in
// registers from the sum to the write (one exponential per element instead of two); vectors per
// thread (threads per row = vectors / kVpt); registers held to 32 per thread (__launch_bounds__
// asking for two blocks of 1024 threads), so that 2048 threads fit on a multiprocessor; blocks
// per multiprocessor held down by unused shared memory. Every variant is checked against a
// float64 softmax of three rows before it is timed.
// Results: bench/results/2026-12-01-h200-rope-softmax-variants.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/reduction/cuda/softmax.cuh"

using namespace tileops::kernels::cuda;
using namespace tileops::kernels::cuda::reduction;
using experiments::bf16_to_float;
using experiments::float_to_bf16;
using T = __nv_bfloat16;
using P = Pack<T, 8>;

template <bool kNanMax>
__device__ __forceinline__ float max_of(float a, float b) {
  if constexpr (kNanMax) {
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
  } else {
    return MaxMonoid<float>::combine(a, b);
  }
}

// This thread's sum of exp(x - max) over its vectors of the row; each packed vector is then hidden
// from the optimiser, so that only the packed row stays live across the reduction that follows.
template <int kVpt>
__device__ __forceinline__ float exp_sum(P (&v)[kVpt], float max, int lane, int lanes,
                                         int accesses) {
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    if (lane + j * lanes < accesses) {
#pragma unroll
      for (int e = 0; e < 8; ++e) sum += fast_exp(to_float(v[j].v[e]) - max);
    }
    opaque(v[j]);
  }
  return sum;
}

template <bool kLog, int kVpt, bool kFused, bool kNanMax, bool kKeepExp, bool kTight>
__global__ void __launch_bounds__(1024, kTight ? 2 : 1)
    rows_kernel(const T* xs, T* outs, long long rows, int length) {
  __shared__ BlockScratch<float> scalar_scratch;
  __shared__ BlockScratch<MaxExpSum> pair_scratch;
  constexpr bool kKeep = kKeepExp && !kLog;
  const int lanes = blockDim.x;
  const int lane = threadIdx.x;
  const int accesses = length / 8;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = xs + row * length;
    P v[kVpt];
    float kept[kKeep ? kVpt * 8 : 1];
    float max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int a = lane + j * lanes;
      if (a < accesses) {
        v[j] = P::load_once(x + static_cast<long long>(a) * 8);
#pragma unroll
        for (int e = 0; e < 8; ++e) max = max_of<kNanMax>(max, to_float(v[j].v[e]));
      }
    }
    MaxExpSum stats;
    float mine = max;  // the maximum this thread's kept exponentials are taken against
    if constexpr (kFused) {
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kVpt; ++j) {
        if (lane + j * lanes < accesses && max != -INFINITY) {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const float ex = fast_exp(to_float(v[j].v[e]) - max);
            sum += ex;
            if constexpr (kKeep) kept[j * 8 + e] = ex;
          }
        } else if constexpr (kKeep) {
#pragma unroll
          for (int e = 0; e < 8; ++e) kept[j * 8 + e] = 0.0f;
        }
        if constexpr (!kKeep) opaque(v[j]);
      }
      stats = block_all<SoftmaxMonoid>(MaxExpSum{max, sum}, pair_scratch);
    } else {
      max = block_all<MaxMonoid<float>>(max, scalar_scratch);
      stats = {max, block_all<SumMonoid>(exp_sum(v, max, lane, lanes, accesses), scalar_scratch)};
    }
    T* out = outs + row * length;
    const Normalizer<kLog, true> normalize(stats);
    const float scale = kKeep ? fast_exp(mine - stats.max) / stats.sum : 0.0f;
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int a = lane + j * lanes;
      if (a >= accesses) continue;
      P y;
#pragma unroll
      for (int e = 0; e < 8; ++e)
        y.v[e] = from_float<T>(kKeep ? kept[j * 8 + e] * scale : normalize(to_float(v[j].v[e])));
      y.store(out + static_cast<long long>(a) * 8);
    }
  }
}

// ---- The row through shared memory: one bulk copy (TMA) per row, issued a row ahead. ----
// A persistent block keeps one row buffer: as soon as every thread holds its part of the row in
// registers (after the first block reduction's barrier), thread 0 starts the bulk copy of the
// block's next row into the same buffer, so that the next row streams in during this row's second
// reduction and its writes, and the memory system never waits for a block to start.
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(bar)));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_address(dst)),
      "l"(src), "r"(bytes), "r"(smem_address(bar))
      : "memory");
}
__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned phase) {
  asm volatile(
      "{\n\t.reg .pred done;\n\tWAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}" ::"r"(smem_address(bar)),
      "r"(phase)
      : "memory");
}

template <bool kLog, int kVpt, bool kTight>
__global__ void __launch_bounds__(1024, kTight ? 2 : 1)
    tma_kernel(const T* xs, T* outs, long long rows, int length) {
  extern __shared__ __align__(128) unsigned char row_buffer[];
  __shared__ unsigned long long loaded;
  __shared__ BlockScratch<float> scratch;
  const T* buffer = reinterpret_cast<const T*>(row_buffer);
  const unsigned row_bytes = static_cast<unsigned>(length) * sizeof(T);
  const int lanes = blockDim.x;
  const int lane = threadIdx.x;
  const int accesses = length / 8;
  if (lane == 0) {
    barrier_init(&loaded);
    if (blockIdx.x < rows)
      bulk_load(row_buffer, xs + static_cast<long long>(blockIdx.x) * length, row_bytes, &loaded);
  }
  __syncthreads();
  unsigned phase = 0;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x, phase ^= 1) {
    barrier_wait(&loaded, phase);
    P v[kVpt];
    float max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int a = lane + j * lanes;
      if (a < accesses) {
        v[j] = P::from(*reinterpret_cast<const Vec<T>*>(buffer + a * 8));
#pragma unroll
        for (int e = 0; e < 8; ++e) max = MaxMonoid<float>::combine(max, to_float(v[j].v[e]));
      }
    }
    max = block_all<MaxMonoid<float>>(max, scratch);  // its barrier: the buffer is read
    const long long next = row + gridDim.x;
    if (lane == 0 && next < rows) bulk_load(row_buffer, xs + next * length, row_bytes, &loaded);
    const float sum = exp_sum(v, max, lane, lanes, accesses);
    const Normalizer<kLog, true> normalize(MaxExpSum{max, block_all<SumMonoid>(sum, scratch)});
    T* out = outs + row * length;
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int a = lane + j * lanes;
      if (a >= accesses) continue;
      P y;
#pragma unroll
      for (int e = 0; e < 8; ++e) y.v[e] = from_float<T>(normalize(to_float(v[j].v[e])));
      y.store(out + static_cast<long long>(a) * 8);
    }
  }
}

__global__ void copy_kernel(const T* x, T* out, long long vectors) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) store_vec_streaming(out + i * 8, load_vec_streaming(x + i * 8));
}

// The first run's variants (--all); the second run timed the library's kernel alone.
static bool kRunAll = false;

struct Case {
  long long rows;
  int length;
};

struct Buffers {
  std::vector<T*> x, out;
};

// About N(0, 2): sums of four uniforms, scaled.
static void fill_random(std::vector<T>& host, unsigned& seed) {
  for (T& v : host) {
    float u = 0.0f;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      u += static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
    }
    v = float_to_bf16(u * 3.5f);
  }
}

// The median time per launch (us) of `launch(x, out)` over the rotated sets.
template <class Launch>
static float time_us(const Buffers& b, Launch launch) {
  return static_cast<float>(experiments::median_launch_us(
      [&](int set) { launch(b.x[set], b.out[set]); }, static_cast<int>(b.x.size()), 20));
}

// The largest relative error of three rows of set 0 against a float64 (log-)softmax.
static double check(const Buffers& b, const std::vector<T>& host_x, const Case& c, bool log) {
  const long long picks[3] = {0, c.rows / 2, c.rows - 1};
  std::vector<T> got(c.length);
  double worst = 0.0;
  for (long long row : picks) {
    CHECK(cudaMemcpy(got.data(), b.out[0] + row * c.length, c.length * sizeof(T),
                     cudaMemcpyDeviceToHost));
    const T* x = host_x.data() + row * c.length;
    double max = -INFINITY, sum = 0.0;
    for (int i = 0; i < c.length; ++i) max = std::max(max, double(bf16_to_float(x[i])));
    for (int i = 0; i < c.length; ++i) sum += std::exp(double(bf16_to_float(x[i])) - max);
    for (int i = 0; i < c.length; ++i) {
      const double v = double(bf16_to_float(x[i])) - max;
      const double want = log ? v - std::log(sum) : std::exp(v) / sum;
      const double err = std::fabs(double(bf16_to_float(got[i])) - want) /
                         std::max(std::fabs(want), log ? 1.0 : 1e-30);
      if (!(err <= worst)) worst = err;  // NaN sticks
    }
  }
  return worst;
}

// Poisons every output (NaN), runs `launch` once and checks it, times it and prints a row.
template <class Launch>
static void run(bool log, const char* name, const Buffers& b, const std::vector<T>& host_x,
                const Case& c, double copy_us, Launch launch, int threads, int per_sm) {
  for (T* out : b.out) CHECK(cudaMemset(out, 0xff, c.rows * c.length * sizeof(T)));
  launch(b.x[0], b.out[0]);
  CHECK(cudaDeviceSynchronize());
  const double err = check(b, host_x, c, log);
  const float us = time_us(b, launch);
  const double bytes = 2.0 * c.rows * c.length * sizeof(T);
  std::printf(
      "%-12s %-30s [%6lld, %6d] %9.2f us %7.1f GB/s %6.1f%%  copy x%.3f  err %.1e  (threads %d, "
      "%d/SM)\n",
      log ? "log_softmax" : "softmax", name, c.rows, c.length, us, bytes / us / 1e3,
      bytes / us / 1e3 / 4250.0 * 100.0, us / copy_us, err, threads, per_sm);
}

// Threads of a block per row with kVpt vectors of 8 per thread; 0 where that block cannot be.
static int row_threads(const Case& c, int vpt) {
  const int threads = c.length / (8 * vpt);
  return threads < 32 || threads > 1024 || c.length % (8 * vpt) != 0 ? 0 : threads;
}

template <bool kLog, int kVpt, bool kFused, bool kNanMax, bool kKeepExp, bool kTight = false>
static void variant(const char* name, const Buffers& b, const std::vector<T>& host_x, const Case& c,
                    double copy_us) {
  const int threads = row_threads(c, kVpt);
  if (threads == 0) return;
  const auto kernel = rows_kernel<kLog, kVpt, kFused, kNanMax, kKeepExp, kTight>;
  auto launch = [&](const T* x, T* out) {
    kernel<<<static_cast<unsigned>(c.rows), threads>>>(x, out, c.rows, c.length);
  };
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  run(kLog, name, b, host_x, c, copy_us, launch, threads, per_sm);
}

// The library's kernel as it stands (softmax.cuh) with kAcc vectors per thread (the plan uses
// kSoftmaxVectorsPerLane = 4), a block per row. `pad` bytes of dynamic shared memory, unused,
// limit the blocks a multiprocessor holds at once (228 KB in all), to see what fewer, faster
// blocks per multiprocessor do to the end of the grid.
template <bool kLog, int kAcc = 4>
static void library(const Buffers& b, const std::vector<T>& host_x, const Case& c, double copy_us,
                    int pad = 0) {
  const int threads = row_threads(c, kAcc);
  if (threads == 0) return;
  const auto kernel = softmax_rows_kernel<kLog, T, 8, 0, kAcc>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, pad));
  auto launch = [&](const T* x, T* out) {
    SoftmaxParams p;
    p.x = x;
    p.out = out;
    p.rows = c.rows;
    p.length = c.length;
    kernel<<<static_cast<unsigned>(c.rows), threads, pad>>>(p);
  };
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, pad));
  char name[64];
  std::snprintf(name, sizeof name, "library vpt%d%s", kAcc, pad ? " padded" : "");
  run(kLog, name, b, host_x, c, copy_us, launch, threads, per_sm);
}

template <bool kLog, int kVpt, bool kTight = false>
static void tma(const Buffers& b, const std::vector<T>& host_x, const Case& c, double copy_us) {
  const int threads = row_threads(c, kVpt);
  if (threads == 0) return;
  const auto kernel = tma_kernel<kLog, kVpt, kTight>;
  const int smem = c.length * static_cast<int>(sizeof(T));
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0, sms = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long blocks = std::min<long long>(c.rows, static_cast<long long>(per_sm) * sms);
  auto launch = [&](const T* x, T* out) {
    kernel<<<static_cast<unsigned>(blocks), threads, smem>>>(x, out, c.rows, c.length);
  };
  char name[64];
  std::snprintf(name, sizeof name, "tma persistent vpt%d%s", kVpt, kTight ? " 32 regs" : "");
  run(kLog, name, b, host_x, c, copy_us, launch, threads, per_sm);
}

template <bool kLog>
static void variants(const Buffers& b, const std::vector<T>& x, const Case& c, double copy_us) {
  library<kLog>(b, x, c, copy_us);
  tma<kLog, 4>(b, x, c, copy_us);
  tma<kLog, 4, true>(b, x, c, copy_us);
  tma<kLog, 2>(b, x, c, copy_us);
  tma<kLog, 8>(b, x, c, copy_us);
  if (kRunAll) {
    library<kLog>(b, x, c, copy_us, 70 * 1024);   // at most 3 blocks per multiprocessor
    library<kLog>(b, x, c, copy_us, 100 * 1024);  // at most 2
    library<kLog, 2>(b, x, c, copy_us);
    library<kLog, 8>(b, x, c, copy_us);
    variant<kLog, 4, false, false, false>("two reductions vpt4", b, x, c, copy_us);
    variant<kLog, 4, true, false, false>("fused vpt4", b, x, c, copy_us);
    variant<kLog, 4, true, true, false>("fused nanmax vpt4", b, x, c, copy_us);
    variant<kLog, 2, true, true, false>("fused nanmax vpt2", b, x, c, copy_us);
    variant<kLog, 8, true, true, false>("fused nanmax vpt8", b, x, c, copy_us);
    variant<kLog, 4, true, true, false, true>("fused nanmax vpt4 32 regs", b, x, c, copy_us);
    variant<kLog, 2, true, true, false, true>("fused nanmax vpt2 32 regs", b, x, c, copy_us);
    variant<kLog, 4, false, true, false>("two reductions nanmax vpt4", b, x, c, copy_us);
    if constexpr (!kLog) {
      variant<kLog, 4, true, true, true>("fused nanmax keep-exp vpt4", b, x, c, copy_us);
      variant<kLog, 2, true, true, true>("fused nanmax keep-exp vpt2", b, x, c, copy_us);
    }
  }
}

int main(int argc, char** argv) {
  kRunAll = argc > 1 && std::strcmp(argv[1], "--all") == 0;
  const Case cases[] = {{4096, 16384}, {16384, 8192}, {1024, 4096}, {2048, 4096}};
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  unsigned seed = 12345u;
  for (const Case& c : cases) {
    const long long elements = c.rows * c.length;
    const size_t bytes = elements * sizeof(T);
    const int sets = static_cast<int>(std::max<long long>(2, (4LL * l2) / (2 * bytes) + 1));
    std::vector<T> host(elements);
    Buffers b;
    // Every set gets its own random values; set 0 is drawn last, so `host` holds its inputs for
    // the check.
    for (int s = sets - 1; s >= 0; --s) {
      fill_random(host, seed);
      T* x = nullptr;
      T* out = nullptr;
      CHECK(cudaMalloc(&x, bytes));
      CHECK(cudaMalloc(&out, bytes));
      CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
      b.x.insert(b.x.begin(), x);
      b.out.insert(b.out.begin(), out);
    }
    const long long vectors = elements / 8;
    const float copy_us = time_us(b, [&](const T* x, T* out) {
      copy_kernel<<<static_cast<unsigned>((vectors + 255) / 256), 256>>>(x, out, vectors);
    });
    std::printf("%-12s %-30s [%6lld, %6d] %9.2f us %7.1f GB/s %6.1f%%  (%d sets)\n", "copy", "",
                c.rows, c.length, copy_us, 2.0 * bytes / copy_us / 1e3,
                2.0 * bytes / copy_us / 1e3 / 4250.0 * 100.0, sets);
    variants<false>(b, host, c, copy_us);
    variants<true>(b, host, c, copy_us);
    for (int s = 0; s < sets; ++s) {
      CHECK(cudaFree(b.x[s]));
      CHECK(cudaFree(b.out[s]));
    }
  }
  return 0;
}
