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
#include "bench/experiments/reduce_inputs.cuh"

namespace {

using namespace experiments::reduce;

constexpr int kThreads = 256;

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

void columns(cudaStream_t stream) {
  Inputs<__nv_bfloat16, __nv_bfloat16> in(stream, true, 11);
  const int vectors = kCols / 8;
  float* partials = nullptr;
  unsigned* counters = nullptr;
  CHECK(cudaMalloc(&partials, 512LL * kCols * 4));
  CHECK(cudaMalloc(&counters, 64 * 4));
  CHECK(cudaMemset(counters, 0, 64 * 4));
  const int groups = (vectors + kThreads - 1) / kThreads;
  const auto out = [&](int s) { return reinterpret_cast<uint4*>(in.out[s]); };
  std::printf("column sums of bfloat16 [%d, %d] (hidden-state-dim0), %d sets\n", kRows, kCols,
              in.sets);
  // kUnroll rows in flight a thread; `splits` splits of the rows.
  const auto sweep = [&]<int kUnroll>(int splits) {
    const dim3 grid(groups, splits);
    const auto two = [&](int s) {
      columns_split<kUnroll>
          <<<grid, kThreads, 0, stream>>>(in.words(s), partials, kRows, vectors, splits);
      columns_finish<<<groups, kThreads, 0, stream>>>(partials, out(s), vectors, splits);
    };
    const auto one = [&](int s) {
      columns_last_block<kUnroll><<<grid, kThreads, 0, stream>>>(in.words(s), partials, counters,
                                                                 out(s), kRows, vectors, splits);
    };
    // Each way poisons set 0's outputs, runs once and checks them, then is timed.
    const auto measure = [&](const char* way, auto&& launch) {
      CHECK(cudaMemsetAsync(in.out[0], 0xff, kCols * 2, stream));
      launch(0);
      const bool ok = in.check(0.0079, 2e-5);
      char name[64];
      std::snprintf(name, sizeof name, "split %d, unroll %d, %s", splits, kUnroll, way);
      report(name, in.bytes(), experiments::median_launch_us(launch, in.sets, 64, stream, true),
             ok);
    };
    measure("finishing kernel", two);
    measure("last block finishes", one);
  };
  for (int splits : {64, 128, 256, 512}) {
    sweep.template operator()<4>(splits);
    sweep.template operator()<8>(splits);
  }
  CHECK(cudaFree(partials));
  CHECK(cudaFree(counters));
}

// kBf16: bfloat16 [2048, 4096] (Amax's fp8-per-tensor size), else float32 (hidden-state-full).
template <bool kBf16>
void full(cudaStream_t stream) {
  Inputs<std::conditional_t<kBf16, __nv_bfloat16, float>, float> in(stream, false, 23);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* totals = nullptr;
  unsigned* counter = nullptr;
  CHECK(cudaMalloc(&totals, 64LL * sms * 4));
  CHECK(cudaMalloc(&counter, 4));
  CHECK(cudaMemset(counter, 0, 4));
  std::printf("the sum of %s [%d, %d] (%s), %d sets\n", kBf16 ? "bfloat16" : "float32", kRows,
              kCols, kBf16 ? "fp8-per-tensor's size" : "hidden-state-full", in.sets);
  const long long vectors = in.elements() * (kBf16 ? 2 : 4) / 16;
  for (int per_sm : {2, 4, 8, 16}) {
    const int blocks = per_sm * sms;
    const auto launch = [&](int s) {
      full_last_block<4, kBf16>
          <<<blocks, kThreads, 0, stream>>>(in.words(s), vectors, totals, counter, in.out[s]);
    };
    launch(0);
    const bool ok = in.check(0.0, 1e-5);
    char name[64];
    std::snprintf(name, sizeof name, "%d blocks an SM, last block finishes", per_sm);
    report(name, in.bytes(), experiments::median_launch_us(launch, in.sets, 64, stream, true), ok);
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
