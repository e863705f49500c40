// An experiment, not part of the library: lean designs for the 2048-row reductions of #10 that
// the library runs far under the 85% target
// (bench/results/2026-12-04-h200-reductions-cub-and-splits.md; this experiment's results:
// bench/results/2026-12-04-h200-reduction-column-tiles.md): SumFwdOp's hidden-state-dim0
// (bfloat16 [2048, 4096] over dim 0: 13.9 us, 28%) and hidden-state-full (float32 [2048, 4096] over
// every axis: 15.1 us, 52%). Both reduce into few outputs, so the library splits the reduced axis
// over blocks and finishes with a second kernel. The designs here keep that two-stage, atomic-free
// arithmetic (the same bits on every run) but change who holds what:
//   columns  a thread owns one 16-byte column vector (8 outputs) of a split of the rows, kUnroll
//            rows in flight, and writes 8 float32 partials; then either a finishing kernel (a
//            thread per column vector, the splits' partials summed in order, 8 loads in flight)
//            or, in the same kernel, the last block of a column group to arrive (a ticket from
//            one atomic counter per group) sums the group's partials in split order.
//   full     a grid of blocks each summing a contiguous share with kUnroll 16-byte loads in
//            flight a thread (float32, and bfloat16 at Amax fp8-per-tensor's size, 38.7%), a block
//            total through warp shuffles, and the last block to arrive summing the block totals in
//            block order (one launch).
// Every variant is checked against float64 sums of the same input first (FAIL on a miss), then
// timed as the library times (sets rotated beyond 4x the L2, graphs of launches, the median
// batch). Run `tileops bench SumFwdOp` in the same call for the library's figures.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/reduce_few_outputs.cu -o build/reduce_few_outputs && \
//        build/reduce_few_outputs
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kRows = 2048, kCols = 4096;

__device__ __forceinline__ void add8(float (&acc)[8], const uint4& w) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    acc[2 * i] += __uint_as_float(words[i] << 16);
    acc[2 * i + 1] += __uint_as_float(words[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ uint4 pack8(const float (&acc)[8]) {
  unsigned words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
    words[i] = *reinterpret_cast<const unsigned*>(&pair);
  }
  return make_uint4(words[0], words[1], words[2], words[3]);
}

// The partials of split `split` of the rows for column vector v: 8 floats at [split][v].
template <int kUnroll>
__device__ __forceinline__ void column_partials(const uint4* x, float* partials, int rows,
                                                int vectors, int splits, int split, int v) {
  const int begin = static_cast<int>(static_cast<long long>(rows) * split / splits);
  const int end = static_cast<int>(static_cast<long long>(rows) * (split + 1) / splits);
  float acc[8] = {};
  for (int r = begin; r < end; r += kUnroll) {
    uint4 w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (r + u < end) w[u] = x[static_cast<long long>(r + u) * vectors + v];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (r + u < end) add8(acc, w[u]);
  }
  auto* out =
      reinterpret_cast<float4*>(partials + (static_cast<long long>(split) * vectors + v) * 8);
  out[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  out[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
}

// Column vector v's 8 sums from its `splits` partials, in split order, 8 loads in flight.
__device__ __forceinline__ uint4 column_total(const float* partials, int vectors, int splits,
                                              int v) {
  float acc[8] = {};
  for (int s0 = 0; s0 < splits; s0 += 8) {
    float4 p[8][2];
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (s0 + u < splits) {
        const auto* at = reinterpret_cast<const float4*>(
            partials + (static_cast<long long>(s0 + u) * vectors + v) * 8);
        p[u][0] = __ldcg(at);  // written by other blocks: from L2, not a stale L1 line
        p[u][1] = __ldcg(at + 1);
      }
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (s0 + u < splits) {
        acc[0] += p[u][0].x, acc[1] += p[u][0].y, acc[2] += p[u][0].z, acc[3] += p[u][0].w;
        acc[4] += p[u][1].x, acc[5] += p[u][1].y, acc[6] += p[u][1].z, acc[7] += p[u][1].w;
      }
  }
  return pack8(acc);
}

template <int kUnroll>
__global__ void __launch_bounds__(kThreads)
    columns_split(const uint4* x, float* partials, int rows, int vectors, int splits) {
  const int v = blockIdx.x * kThreads + threadIdx.x;
  if (v < vectors) column_partials<kUnroll>(x, partials, rows, vectors, splits, blockIdx.y, v);
}

__global__ void __launch_bounds__(kThreads)
    columns_finish(const float* partials, uint4* out, int vectors, int splits) {
  const int v = blockIdx.x * kThreads + threadIdx.x;
  if (v < vectors) out[v] = column_total(partials, vectors, splits, v);
}

// One launch: the last block of column group blockIdx.x to arrive finishes the group and resets
// its counter for the next launch.
template <int kUnroll>
__global__ void __launch_bounds__(kThreads)
    columns_last_block(const uint4* x, float* partials, unsigned* counters, uint4* out, int rows,
                       int vectors, int splits) {
  const int v = blockIdx.x * kThreads + threadIdx.x;
  if (v < vectors) column_partials<kUnroll>(x, partials, rows, vectors, splits, blockIdx.y, v);
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0)
    last = atomicAdd(&counters[blockIdx.x], 1u) == static_cast<unsigned>(splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (v < vectors) out[v] = column_total(partials, vectors, splits, v);
  if (threadIdx.x == 0) counters[blockIdx.x] = 0;
}

// The whole tensor's sum (float32, or bfloat16 with kBf16): block b sums the 16-byte vectors
// [b * share, (b + 1) * share), then the last block to arrive sums the block totals in block
// order.
template <int kUnroll, bool kBf16>
__global__ void __launch_bounds__(kThreads)
    full_last_block(const uint4* x, long long vectors, float* totals, unsigned* counter,
                    float* out) {
  const long long share = (vectors + gridDim.x - 1) / gridDim.x;
  const long long begin = blockIdx.x * share;
  const long long end = min(vectors, begin + share);
  float lanes[8] = {};
  for (long long i = begin + threadIdx.x; i < end; i += kThreads * kUnroll) {
    uint4 w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * kThreads < end) w[u] = x[i + u * kThreads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u * kThreads >= end) continue;
      if constexpr (kBf16) {
        add8(lanes, w[u]);
      } else {
        lanes[0] += __uint_as_float(w[u].x), lanes[1] += __uint_as_float(w[u].y);
        lanes[2] += __uint_as_float(w[u].z), lanes[3] += __uint_as_float(w[u].w);
      }
    }
  }
  float acc = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  __shared__ float warp_totals[kThreads / 32];
  __shared__ bool last;
  for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) block += warp_totals[w];
    totals[blockIdx.x] = block;
    __threadfence();
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The block totals in block order: thread t sums t, t + kThreads, ...; then the warps, then
  // the block, each in a fixed order.
  float sum = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) sum += __ldcg(totals + b);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_totals[w];
    *out = total;
    *counter = 0;
  }
}

__global__ void fill_bf16(__nv_bfloat16* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned h = static_cast<unsigned>(i * 2654435761u) ^ seed;
    p[i] = __float2bfloat16(static_cast<float>(h % 2001) / 1000.0f - 1.0f);
  }
}

__global__ void fill_f32(float* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned h = static_cast<unsigned>(i * 2654435761u) ^ seed;
    p[i] = static_cast<float>(h % 2001) / 1000.0f - 1.0f;
  }
}

int l2_bytes() {
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  return l2;
}

void report(const char* name, double bytes, double us, bool ok) {
  std::printf("%-46s %8.2f us %7.0f GB/s %6.1f%%  %s\n", name, us, bytes / us / 1e3,
              100.0 * bytes / us / 1e3 / 4250.0, ok ? "ok" : "FAIL");
}

void columns(cudaStream_t stream) {
  const long long n = static_cast<long long>(kRows) * kCols;
  const int vectors = kCols / 8;
  const int sets = static_cast<int>(std::max<long long>(2, 4LL * l2_bytes() / (n * 2) + 1));
  std::vector<__nv_bfloat16*> x(sets);
  std::vector<uint4*> out(sets);
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaMalloc(&x[s], n * 2));
    CHECK(cudaMalloc(&out[s], kCols * 2));
    fill_bf16<<<1024, 256, 0, stream>>>(x[s], n, 11 + s);
  }
  std::vector<__nv_bfloat16> host(n);
  CHECK(cudaMemcpyAsync(host.data(), x[0], n * 2, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<double> expected(kCols, 0.0), magnitude(kCols, 0.0);
  for (long long i = 0; i < n; ++i) {
    const double v = experiments::bf16_to_float(host[i]);
    expected[i % kCols] += v;
    magnitude[i % kCols] += std::fabs(v);
  }
  float* partials = nullptr;
  unsigned* counters = nullptr;
  CHECK(cudaMalloc(&partials, 512LL * kCols * 4));
  CHECK(cudaMalloc(&counters, 64 * 4));
  CHECK(cudaMemset(counters, 0, 64 * 4));
  const int groups = (vectors + kThreads - 1) / kThreads;
  const double bytes = n * 2.0 + kCols * 2.0;
  const auto check = [&] {
    std::vector<__nv_bfloat16> got(kCols);
    CHECK(cudaMemcpyAsync(got.data(), out[0], kCols * 2, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int c = 0; c < kCols; ++c)
      if (!(std::fabs(experiments::bf16_to_float(got[c]) - expected[c]) <=
            0.0079 * std::fabs(expected[c]) + 2e-5 * magnitude[c]))
        return false;
    return true;
  };
  std::printf("column sums of bfloat16 [%d, %d] (hidden-state-dim0), %d sets\n", kRows, kCols,
              sets);
  // kUnroll rows in flight a thread; `splits` splits of the rows.
  const auto sweep = [&]<int kUnroll>(int splits) {
    const dim3 grid(groups, splits);
    const auto two = [&](int s) {
      columns_split<kUnroll><<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(x[s]),
                                                            partials, kRows, vectors, splits);
      columns_finish<<<groups, kThreads, 0, stream>>>(partials, out[s], vectors, splits);
    };
    const auto one = [&](int s) {
      columns_last_block<kUnroll><<<grid, kThreads, 0, stream>>>(
          reinterpret_cast<const uint4*>(x[s]), partials, counters, out[s], kRows, vectors, splits);
    };
    char name[64];
    CHECK(cudaMemsetAsync(out[0], 0xff, kCols * 2, stream));
    two(0);
    const bool two_ok = check();
    std::snprintf(name, sizeof name, "split %d, unroll %d, finishing kernel", splits, kUnroll);
    report(name, bytes, experiments::median_launch_us(two, sets, 64, stream, true), two_ok);
    CHECK(cudaMemsetAsync(out[0], 0xff, kCols * 2, stream));
    one(0);
    const bool one_ok = check();
    std::snprintf(name, sizeof name, "split %d, unroll %d, last block finishes", splits, kUnroll);
    report(name, bytes, experiments::median_launch_us(one, sets, 64, stream, true), one_ok);
  };
  for (int splits : {64, 128, 256, 512}) {
    sweep.template operator()<4>(splits);
    sweep.template operator()<8>(splits);
  }
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaFree(x[s]));
    CHECK(cudaFree(out[s]));
  }
  CHECK(cudaFree(partials));
  CHECK(cudaFree(counters));
}

// kBf16: bfloat16 [2048, 4096] (Amax's fp8-per-tensor size), else float32 (hidden-state-full).
template <bool kBf16>
void full(cudaStream_t stream) {
  const long long n = static_cast<long long>(kRows) * kCols;
  const long long item = kBf16 ? 2 : 4;
  const int sets = static_cast<int>(std::max<long long>(2, 4LL * l2_bytes() / (n * item) + 1));
  std::vector<void*> x(sets);
  std::vector<float*> out(sets);
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaMalloc(&x[s], n * item));
    CHECK(cudaMalloc(&out[s], 4));
    if constexpr (kBf16)
      fill_bf16<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(x[s]), n, 23 + s);
    else
      fill_f32<<<1024, 256, 0, stream>>>(static_cast<float*>(x[s]), n, 23 + s);
  }
  std::vector<unsigned char> host(n * item);
  CHECK(cudaMemcpyAsync(host.data(), x[0], n * item, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  double expected = 0.0, magnitude = 0.0;
  for (long long i = 0; i < n; ++i) {
    double v;
    if constexpr (kBf16) {
      v = experiments::bf16_to_float(reinterpret_cast<const __nv_bfloat16*>(host.data())[i]);
    } else {
      v = reinterpret_cast<const float*>(host.data())[i];
    }
    expected += v;
    magnitude += std::fabs(v);
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* totals = nullptr;
  unsigned* counter = nullptr;
  CHECK(cudaMalloc(&totals, 64LL * sms * 4));
  CHECK(cudaMalloc(&counter, 4));
  CHECK(cudaMemset(counter, 0, 4));
  std::printf("the sum of %s [%d, %d] (%s), %d sets\n", kBf16 ? "bfloat16" : "float32", kRows,
              kCols, kBf16 ? "fp8-per-tensor's size" : "hidden-state-full", sets);
  for (int per_sm : {2, 4, 8, 16}) {
    const int blocks = per_sm * sms;
    const auto launch = [&](int s) {
      full_last_block<4, kBf16><<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint4*>(x[s]), n * item / 16, totals, counter, out[s]);
    };
    launch(0);
    float got = 0.0f;
    CHECK(cudaMemcpyAsync(&got, out[0], 4, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    const bool ok = std::fabs(got - expected) <= 1e-5 * magnitude;
    char name[64];
    std::snprintf(name, sizeof name, "%d blocks an SM, last block finishes", per_sm);
    report(name, n * item + 4.0, experiments::median_launch_us(launch, sets, 64, stream, true), ok);
  }
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaFree(x[s]));
    CHECK(cudaFree(out[s]));
  }
  CHECK(cudaFree(totals));
  CHECK(cudaFree(counter));
}

}  // namespace

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  columns(stream);
  full<false>(stream);
  full<true>(stream);
  return 0;
}
