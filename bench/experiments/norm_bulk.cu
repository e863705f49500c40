// An experiment, not part of the library: the norm rows staged in shared memory by one bulk
// asynchronous copy per row (cp.async.bulk, completed on an mbarrier) instead of held in
// registers, beside the library's register kernel (norm_rows_kernel, block per row) on the same
// rows, timed as `tileops bench` times (rotated buffers beyond the L2, median batch).
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/norm_bulk.cu -o build/norm_bulk && build/norm_bulk
//
// Why: a block holding its row in registers keeps 2-4 rows in flight per SM (the register file
// is the limit), and LayerNorm's second reduction leaves DRAM idle while it runs. A row in shared
// memory costs no registers, so an SM keeps as many rows in flight as its 227 KB hold (13 rows of
// 16 KB), and the loads of later rows overlap the reductions of earlier ones.
// Each variant is checked against a float64 reference on the first input set before it is timed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/norm_rows.cuh"
#include "kernels/norm/cuda/norm.cuh"
#include "kernels/reduction/cuda/softmax.cuh"

using namespace tileops::kernels::cuda;
namespace red = tileops::kernels::cuda::reduction;
using T = __nv_bfloat16;
using namespace experiments::norm_rows;
using V = Vec<T>;
constexpr int kN = V::kSize;

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Thread 0 only: arm the barrier for `bytes` and start the copy of [src, src + bytes) to dst.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar, bool evict_first) {
  if (evict_first) {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1], %2, [%3], %4;" ::"r"(smem_address(dst)),
        "l"(src), "r"(bytes), "r"(smem_address(bar)), "l"(policy)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1], %2, [%3];" ::"r"(smem_address(dst)),
        "l"(src), "r"(bytes), "r"(smem_address(bar))
        : "memory");
  }
}

__device__ __forceinline__ void barrier_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(bar)));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void barrier_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned phase) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}" ::"r"(smem_address(bar)),
      "r"(phase)
      : "memory");
}

template <class F>
__device__ __forceinline__ void for_each_vector(int n_vec, F&& f) {
#pragma unroll 4
  for (int v = threadIdx.x; v < n_vec; v += blockDim.x) f(v);
}

// One block per row; the row (and for the fused op the residual) arrives in shared memory by one
// bulk copy each. kWeightBulk: the weight and bias arrive the same way (else read through L1).
template <NormKind kKind, int kThreads, bool kWeightBulk, bool kEvictFirst>
__global__ void __launch_bounds__(kThreads) bulk_norm_kernel(NormParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ BlockSumStorage storage;
  const int n = static_cast<int>(p.n);
  const int n_vec = n / kN;
  const unsigned row_bytes = static_cast<unsigned>(n * sizeof(T));
  const long long offset = static_cast<long long>(blockIdx.x) * n;
  T* xs = reinterpret_cast<T*>(smem);
  T* rs = xs + n;  // the residual, fused op only
  T* ws = xs + (kKind == NormKind::kFusedAddRMS ? 2 * n : n);
  T* bs = ws + n;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  if (threadIdx.x == 0) {
    barrier_init(&bar);
    unsigned bytes = row_bytes;
    if (kKind == NormKind::kFusedAddRMS) bytes += row_bytes;
    if (kWeightBulk && weight) bytes += row_bytes;
    if (kWeightBulk && bias && kKind == NormKind::kLayer) bytes += row_bytes;
    barrier_expect(&bar, bytes);
    bulk_load(xs, static_cast<const T*>(p.x) + offset, row_bytes, &bar, kEvictFirst);
    if (kKind == NormKind::kFusedAddRMS)
      bulk_load(rs, static_cast<const T*>(p.residual) + offset, row_bytes, &bar, kEvictFirst);
    if (kWeightBulk && weight) bulk_load(ws, weight, row_bytes, &bar, false);
    if (kWeightBulk && bias && kKind == NormKind::kLayer)
      bulk_load(bs, bias, row_bytes, &bar, false);
  }
  __syncthreads();
  barrier_wait(&bar, 0);
  const V* xv = reinterpret_cast<const V*>(xs);
  const float inv_n = 1.0f / static_cast<float>(n);
  float mean = 0.0f, scale;
  if constexpr (kKind == NormKind::kLayer) {
    float sum = 0.0f;
    for_each_vector(n_vec, [&](int v) {
      const V a = xv[v];
#pragma unroll
      for (int e = 0; e < kN; ++e) sum += to_float(a.v[e]);
    });
    mean = block_sum(sum, storage) * inv_n;
    float centered = 0.0f;
    for_each_vector(n_vec, [&](int v) {
      const V a = xv[v];
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float d = to_float(a.v[e]) - mean;
        centered += d * d;
      }
    });
    scale = rsqrtf(block_sum(centered, storage) * inv_n + p.eps);
  } else if constexpr (kKind == NormKind::kFusedAddRMS) {
    V* xw = reinterpret_cast<V*>(xs);
    const V* rv = reinterpret_cast<const V*>(rs);
    T* residual = static_cast<T*>(p.residual) + offset;
    float squares = 0.0f;
    for_each_vector(n_vec, [&](int v) {
      const V a = xw[v];
      V r = rv[v];
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        r.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
        const float f = to_float(r.v[e]);
        squares += f * f;
      }
      store_vec(residual + static_cast<long long>(v) * kN, r);
      xw[v] = r;  // the same thread reads it back below
    });
    scale = rsqrtf(block_sum(squares, storage) * inv_n + p.eps);
  } else {
    float squares = 0.0f;
    for_each_vector(n_vec, [&](int v) {
      const V a = xv[v];
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float f = to_float(a.v[e]);
        squares += f * f;
      }
    });
    scale = rsqrtf(block_sum(squares, storage) * inv_n + p.eps);
  }
  T* out = static_cast<T*>(p.out) + offset;
  for_each_vector(n_vec, [&](int v) {
    const V a = xv[v];
    V w{}, b{};
    if (weight) w = kWeightBulk ? reinterpret_cast<const V*>(ws)[v] : load_vec(weight + v * kN);
    if (kKind == NormKind::kLayer && bias)
      b = kWeightBulk ? reinterpret_cast<const V*>(bs)[v] : load_vec(bias + v * kN);
    V y;
#pragma unroll
    for (int e = 0; e < kN; ++e) {
      float value = (to_float(a.v[e]) - mean) * scale;
      if (weight) value *= to_float(w.v[e]);
      if (kKind == NormKind::kLayer && bias) value += to_float(b.v[e]);
      y.v[e] = from_float<T>(value);
    }
    store_vec_streaming(out + static_cast<long long>(v) * kN, y);
  });
}

// Softmax and log-softmax with the row staged the same way: the maximum, the sum of exponentials
// and the writes each read the row from shared memory.
template <bool kLog, int kThreads>
__global__ void __launch_bounds__(kThreads) bulk_softmax_kernel(red::SoftmaxParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ red::BlockScratch<float> scratch;
  const int n = static_cast<int>(p.length);
  const int n_vec = n / kN;
  const long long offset = static_cast<long long>(blockIdx.x) * n;
  if (threadIdx.x == 0) {
    barrier_init(&bar);
    barrier_expect(&bar, n * sizeof(T));
    bulk_load(smem, static_cast<const T*>(p.x) + offset, n * sizeof(T), &bar, false);
  }
  __syncthreads();
  barrier_wait(&bar, 0);
  const V* xv = reinterpret_cast<const V*>(smem);
  float max = -INFINITY;
  for_each_vector(n_vec, [&](int v) {
    const V a = xv[v];
#pragma unroll
    for (int e = 0; e < kN; ++e) max = red::MaxMonoid<float>::combine(max, to_float(a.v[e]));
  });
  max = red::block_all<red::MaxMonoid<float>>(max, scratch);
  float sum = 0.0f;
  for_each_vector(n_vec, [&](int v) {
    const V a = xv[v];
#pragma unroll
    for (int e = 0; e < kN; ++e) sum += red::fast_exp(to_float(a.v[e]) - max);
  });
  sum = red::block_all<red::SumMonoid>(sum, scratch);
  const red::Normalizer<kLog, true> normalize(red::MaxExpSum{max, sum});
  T* out = static_cast<T*>(p.out) + offset;
  for_each_vector(n_vec, [&](int v) {
    const V a = xv[v];
    V y;
#pragma unroll
    for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(a.v[e])));
    store_vec_streaming(out + static_cast<long long>(v) * kN, y);
  });
}

__global__ void empty_kernel() {}

const char* kind_name(NormKind k) {
  return k == NormKind::kRMS ? "rms" : k == NormKind::kLayer ? "layer" : "fused_add_rms";
}

void report(const char* name, NormKind kind, const Shape& s, double us, double err, int per_sm,
            int threads) {
  const double streams = kind == NormKind::kFusedAddRMS ? 4.0 : 2.0;  // rows read and written
  const double bytes = streams * s.rows * s.n * sizeof(T);
  std::printf("%-14s %-28s [%6lld, %5d] %9.2f us %8.1f GB/s %6.1f%%  err %.2f  (%d thr, %d/SM)\n",
              kind_name(kind), name, s.rows, s.n, us, bytes / us / 1e3,
              bytes / us / 1e3 / 4250 * 100, err, threads, per_sm);
}

template <class Launch>
double time_us(const Shape& s, Launch&& launch, int sets, cudaStream_t stream) {
  return experiments::median_launch_us(launch, sets, std::max(20, 2 * sets), stream,
                                       s.rows * s.n < (1 << 20));
}

// The library's kernel as its block path launches it: a block per row, 4 vectors per thread.
template <NormKind kKind>
void registers(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  auto kernel = norm_rows_kernel<kKind, T, 0, 4>;
  const int threads = std::clamp((s.n / kN / 4 + 31) / 32 * 32, 32, 1024);
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  auto launch = [&](int set) {
    kernel<<<(unsigned)s.rows, threads, 0, stream>>>(params_of(s, b, set));
  };
  reset_residual(b);
  launch(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check<kKind>(s, b);
  report("registers (library)", kKind, s, time_us(s, launch, sets, stream), err, per_sm, threads);
}

template <NormKind kKind, int kThreads, bool kWeightBulk, bool kEvictFirst>
void bulk(const char* name, const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  auto kernel = bulk_norm_kernel<kKind, kThreads, kWeightBulk, kEvictFirst>;
  int rows_held = kKind == NormKind::kFusedAddRMS ? 2 : 1;
  if (kWeightBulk) rows_held += kKind == NormKind::kLayer ? 2 : 1;
  const int smem = rows_held * s.n * (int)sizeof(T);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
  auto launch = [&](int set) {
    kernel<<<(unsigned)s.rows, kThreads, smem, stream>>>(params_of(s, b, set));
  };
  reset_residual(b);
  launch(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check<kKind>(s, b);
  report(name, kKind, s, time_us(s, launch, sets, stream), err, per_sm, kThreads);
}

template <NormKind kKind>
void compare(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  registers<kKind>(s, b, sets, stream);
  bulk<kKind, 128, false, false>("bulk 128", s, b, sets, stream);
  bulk<kKind, 256, false, false>("bulk 256", s, b, sets, stream);
  bulk<kKind, 512, false, false>("bulk 512", s, b, sets, stream);
  bulk<kKind, 256, false, true>("bulk 256 evict-first", s, b, sets, stream);
  bulk<kKind, 256, true, false>("bulk 256 weight bulk", s, b, sets, stream);
}

red::SoftmaxParams softmax_params_of(const Shape& s, Buffers& b, int set) {
  red::SoftmaxParams p;
  p.x = b.x[set];
  p.out = b.out[set];
  p.rows = s.rows;
  p.length = s.n;
  return p;
}

// Max |out - reference| over the first rows of set 0, relative to max(|reference|, 1e-3) in
// bfloat16 steps (1/128).
template <bool kLog>
double check_softmax(const Shape& s, Buffers& b) {
  const long long rows = std::min<long long>(s.rows, 8);
  std::vector<T> out((size_t)rows * s.n);
  CHECK(cudaMemcpy(out.data(), b.out[0], out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  using experiments::bf16_to_float;
  double worst = 0;
  for (long long r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int i = 0; i < s.n; ++i) max = std::max<double>(max, bf16_to_float(b.host_x[r * s.n + i]));
    for (int i = 0; i < s.n; ++i) sum += std::exp(bf16_to_float(b.host_x[r * s.n + i]) - max);
    for (int i = 0; i < s.n; ++i) {
      const double v = bf16_to_float(b.host_x[r * s.n + i]) - max;
      const double y = kLog ? v - std::log(sum) : std::exp(v) / sum;
      const double got = bf16_to_float(out[(size_t)r * s.n + i]);
      worst = std::max(worst, std::fabs(got - y) / (std::max(std::fabs(y), 1e-3) / 128));
    }
  }
  return worst;
}

void report_softmax(const char* name, bool log, const Shape& s, double us, double err, int per_sm,
                    int threads) {
  const double bytes = 2.0 * s.rows * s.n * sizeof(T);
  std::printf("%-14s %-28s [%6lld, %5d] %9.2f us %8.1f GB/s %6.1f%%  err %.2f  (%d thr, %d/SM)\n",
              log ? "log_softmax" : "softmax", name, s.rows, s.n, us, bytes / us / 1e3,
              bytes / us / 1e3 / 4250 * 100, err, threads, per_sm);
}

// The library's register path as its plan launches it: a block per row, 4 vectors per lane.
template <bool kLog>
void softmax_registers(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  auto kernel = red::softmax_rows_kernel<kLog, T, kN, 0, 4>;
  const int threads = std::clamp((s.n / kN / 4 + 31) / 32 * 32, 32, 1024);
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  auto launch = [&](int set) {
    kernel<<<(unsigned)s.rows, threads, 0, stream>>>(softmax_params_of(s, b, set));
  };
  launch(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check_softmax<kLog>(s, b);
  report_softmax("registers (library)", kLog, s, time_us(s, launch, sets, stream), err, per_sm,
                 threads);
}

template <bool kLog, int kThreads>
void softmax_bulk(const char* name, const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  auto kernel = bulk_softmax_kernel<kLog, kThreads>;
  const int smem = s.n * (int)sizeof(T);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
  auto launch = [&](int set) {
    kernel<<<(unsigned)s.rows, kThreads, smem, stream>>>(softmax_params_of(s, b, set));
  };
  launch(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check_softmax<kLog>(s, b);
  report_softmax(name, kLog, s, time_us(s, launch, sets, stream), err, per_sm, kThreads);
}

template <bool kLog>
void compare_softmax(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  softmax_registers<kLog>(s, b, sets, stream);
  softmax_bulk<kLog, 128>("bulk 128", s, b, sets, stream);
  softmax_bulk<kLog, 256>("bulk 256", s, b, sets, stream);
  softmax_bulk<kLog, 512>("bulk 512", s, b, sets, stream);
}

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Shape shapes[] = {{1, 4096},     {2048, 4096},  {2048, 8192},
                          {2048, 16384}, {16384, 8192}, {4096, 16384}};
  for (const Shape& s : shapes) {
    const double set_bytes = 4.0 * s.rows * s.n * sizeof(T);
    const int sets = std::min(2048, std::max(2, (int)(4 * 50e6 / set_bytes) + 1));
    Buffers b = make(s, sets);
    if (s.rows == 1) {
      auto launch = [&](int) { empty_kernel<<<1, 32, 0, stream>>>(); };
      std::printf("%-43s [%6lld, %5d] %9.2f us\n", "empty kernel (graph)", s.rows, s.n,
                  experiments::median_launch_us(launch, sets, 2 * sets, stream, true));
    }
    compare<NormKind::kLayer>(s, b, sets, stream);
    compare<NormKind::kRMS>(s, b, sets, stream);
    compare<NormKind::kFusedAddRMS>(s, b, sets, stream);
    compare_softmax<false>(s, b, sets, stream);
    compare_softmax<true>(s, b, sets, stream);
    release(b);
  }
  return 0;
}
