// An experiment, not part of the library: bfloat16 add on [16384, 8192] (same shapes, and a
// [8192] bias broadcast over the rows) written with the knobs that could move the elementwise
// kernels of kernels/elementwise/cuda/ to and past torch's vectorised kernel (which measured
// 100.6% of the 4.25 TB/s copy ceiling on the same-shape add against our 93.4%): the grid
// (persistent with a grid-stride loop, or one block per chunk), the cache hints (streaming
// ld.global.cs / st.global.cs, or plain), and vectors per thread. Timed as `tileops bench` times
// (buffers rotated beyond the L2, batches of back-to-back launches between CUDA events, the median
// batch), beside a vectorised copy.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/binary_variants.cu -o build/binary_variants && build/binary_variants
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/common/cuda/packed.cuh"

using namespace tileops::kernels::cuda;
using T = __nv_bfloat16;

constexpr int kThreads = 256;

template <bool kStreaming>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (kStreaming) return __ldcs(p);
  return *p;
}
template <bool kStreaming>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (kStreaming)
    __stcs(p, v);
  else
    *p = v;
}

__device__ __forceinline__ uint4 add(uint4 x, uint4 y) {
  return map_packed<T>(x, y, [](float a, float b) { return a + b; });
}

// Persistent: a grid sized to the device, kUnroll vectors per thread per step, `stride` apart.
template <int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(kThreads)
    add_persistent(const uint4* a, const uint4* b, uint4* out, long long vectors) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long base = (long long)blockIdx.x * blockDim.x + threadIdx.x; base < vectors;
       base += kUnroll * stride) {
    uint4 x[kUnroll], y[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * stride < vectors) {
        x[u] = load<kStreaming>(a + base + u * stride);
        y[u] = load<kStreaming>(b + base + u * stride);
      }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * stride < vectors) store<kStreaming>(out + base + u * stride, add(x[u], y[u]));
  }
}

// One block per chunk of kThreads * kUnroll vectors (torch's scheme): no loop.
template <int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(kThreads)
    add_chunked(const uint4* a, const uint4* b, uint4* out, long long vectors) {
  const long long base = (long long)blockIdx.x * kThreads * kUnroll + threadIdx.x;
  uint4 x[kUnroll], y[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (base + u * kThreads < vectors) {
      x[u] = load<kStreaming>(a + base + u * kThreads);
      y[u] = load<kStreaming>(b + base + u * kThreads);
    }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (base + u * kThreads < vectors)
      store<kStreaming>(out + base + u * kThreads, add(x[u], y[u]));
}

// The bias: one block per (row, chunk of kThreads * kUnroll vectors of the row); the bias through
// the read-only cache.
template <int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(kThreads)
    bias_chunked(const uint4* a, const uint4* bias, uint4* out, long long row_vectors) {
  const long long row = blockIdx.y;
  const long long col = (long long)blockIdx.x * kThreads * kUnroll + threadIdx.x;
  const uint4* a_row = a + row * row_vectors;
  uint4* out_row = out + row * row_vectors;
  uint4 x[kUnroll], y[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (col + u * kThreads < row_vectors) {
      x[u] = load<kStreaming>(a_row + col + u * kThreads);
      y[u] = __ldg(bias + col + u * kThreads);
    }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (col + u * kThreads < row_vectors)
      store<kStreaming>(out_row + col + u * kThreads, add(x[u], y[u]));
}

// The bias as the library's repeated-row kernel cuts it (Note [Binary kernels]): one block per
// kThreads vectors of the output as one run, each thread's column from the block's first by one
// 32-bit division (or none, kDivide false, where the row is a multiple of the block: timing the
// division alone).
template <bool kDivide>
__global__ void __launch_bounds__(kThreads)
    bias_flat(const uint4* a, const uint4* bias, uint4* out, long long row_vectors) {
  const long long first = (long long)blockIdx.x * kThreads;
  const long long i = first + threadIdx.x;
  long long column;
  if constexpr (kDivide) {
    column = (long long)((unsigned)first % (unsigned)row_vectors) + threadIdx.x;
    if (column >= row_vectors) column -= row_vectors;
  } else {
    column = (first & (row_vectors - 1)) + threadIdx.x;  // row_vectors a power of two >= kThreads
  }
  out[i] = add(a[i], __ldg(bias + column));
}

template <bool kStreaming>
__global__ void __launch_bounds__(kThreads) copy_chunked(const uint4* a, uint4* out, long long n) {
  const long long base = (long long)blockIdx.x * kThreads * 4 + threadIdx.x;
  uint4 x[4];
#pragma unroll
  for (int u = 0; u < 4; ++u)
    if (base + u * kThreads < n) x[u] = load<kStreaming>(a + base + u * kThreads);
#pragma unroll
  for (int u = 0; u < 4; ++u)
    if (base + u * kThreads < n) store<kStreaming>(out + base + u * kThreads, x[u]);
}

// Median time per launch (us) of launch(set) over rotated sets.
template <class Launch>
double time_us(Launch&& launch, int sets, cudaStream_t stream) {
  return experiments::median_launch_us(launch, sets, std::max(sets, 8), stream);
}

__global__ void fill(uint4* p, long long n, unsigned seed) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    // bfloat16 values in [1, 2): exponent 0x3F8x, never zero.
    const unsigned w = 0x3F803F80u | (h & 0x007F007Fu);
    p[i] = make_uint4(w, w ^ 0x00110011u, w ^ 0x00220022u, w ^ 0x00330033u);
  }
}

// Arguments: rows and columns (default 16384 8192); `2048 4096 bias` times only the copy and the
// bias kernels, at the size of #10's bias-broadcast prefill row.
int main(int argc, char** argv) {
  int sms = 0, l2 = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const long long rows = argc > 2 ? std::atoll(argv[1]) : 16384;
  const long long cols = argc > 2 ? std::atoll(argv[2]) : 8192;
  const bool bias_only = argc > 3;
  const long long vectors = rows * cols / 8, row_vectors = cols / 8;
  // Sets of a, b and out past four times the L2 (2 x 805 MB at the default shape).
  const int sets = static_cast<int>(std::max<long long>(2, 4LL * l2 / (3 * vectors * 16) + 1));
  std::vector<uint4*> a(sets), b(sets), out(sets);
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaMalloc(&a[s], vectors * 16));
    CHECK(cudaMalloc(&b[s], vectors * 16));
    CHECK(cudaMalloc(&out[s], vectors * 16));
    fill<<<1024, 256, 0, stream>>>(a[s], vectors, 1 + s);
    fill<<<1024, 256, 0, stream>>>(b[s], vectors, 7 + s);
  }
  CHECK(cudaStreamSynchronize(stream));
  const double same_bytes = 3.0 * vectors * 16, bias_bytes = 2.0 * vectors * 16 + cols * 2;
  auto report = [&](const char* name, double bytes, double us) {
    std::printf("%-44s %9.2f us %8.0f GB/s %6.1f%%\n", name, us, bytes / us / 1e3,
                100.0 * bytes / us / 1e3 / 4250.0);
  };
  auto persistent = [&](auto kernel, int per_sm, const char* name) {
    report(name, same_bytes,
           time_us(
               [&](int s) {
                 kernel<<<sms * per_sm, kThreads, 0, stream>>>(a[s], b[s], out[s], vectors);
               },
               sets, stream));
  };
  auto chunked = [&](auto kernel, int unroll, const char* name) {
    const long long blocks = (vectors + kThreads * unroll - 1) / (kThreads * unroll);
    report(name, same_bytes,
           time_us(
               [&](int s) {
                 kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(a[s], b[s], out[s], vectors);
               },
               sets, stream));
  };
  auto bias = [&](auto kernel, int unroll, const char* name) {
    const dim3 grid((unsigned)((row_vectors + kThreads * unroll - 1) / (kThreads * unroll)),
                    (unsigned)rows);
    report(
        name, bias_bytes,
        time_us(
            [&](int s) { kernel<<<grid, kThreads, 0, stream>>>(a[s], b[s], out[s], row_vectors); },
            sets, stream));
  };
  report("copy chunked, streaming (2 streams)", 2.0 * vectors * 16,
         time_us(
             [&](int s) {
               copy_chunked<true>
                   <<<(unsigned)(vectors / 1024), kThreads, 0, stream>>>(a[s], out[s], vectors);
             },
             sets, stream));
  report("copy chunked, plain (2 streams)", 2.0 * vectors * 16,
         time_us(
             [&](int s) {
               copy_chunked<false>
                   <<<(unsigned)(vectors / 1024), kThreads, 0, stream>>>(a[s], out[s], vectors);
             },
             sets, stream));
  std::printf("[%lld, %lld], %d sets\n", rows, cols, sets);
  if (bias_only) {
    bias(bias_chunked<4, false>, 4, "bias chunked, unroll 4, plain");
    bias(bias_chunked<2, false>, 2, "bias chunked, unroll 2, plain");
    bias(bias_chunked<1, false>, 1, "bias chunked, unroll 1, plain");
    bias(bias_chunked<1, true>, 1, "bias chunked, unroll 1, streaming");
    // Whole blocks only: rows * cols a multiple of 8 kThreads.
    auto flat = [&](auto kernel, const char* name) {
      report(name, bias_bytes,
             time_us(
                 [&](int s) {
                   kernel<<<(unsigned)(vectors / kThreads), kThreads, 0, stream>>>(
                       a[s], b[s], out[s], row_vectors);
                 },
                 sets, stream));
    };
    flat(bias_flat<true>, "bias flat, one division a block");
    if ((row_vectors & (row_vectors - 1)) == 0 && row_vectors >= kThreads)
      flat(bias_flat<false>, "bias flat, a mask");
    chunked(add_chunked<1, false>, 1, "add chunked (same shapes), unroll 1, plain");
    return 0;
  }
  persistent(add_persistent<4, true>, 4, "add persistent x4/SM, unroll 4, streaming");
  persistent(add_persistent<4, false>, 4, "add persistent x4/SM, unroll 4, plain");
  persistent(add_persistent<2, true>, 8, "add persistent x8/SM, unroll 2, streaming");
  persistent(add_persistent<2, false>, 8, "add persistent x8/SM, unroll 2, plain");
  chunked(add_chunked<4, true>, 4, "add chunked, unroll 4, streaming");
  chunked(add_chunked<4, false>, 4, "add chunked, unroll 4, plain");
  chunked(add_chunked<2, false>, 2, "add chunked, unroll 2, plain");
  chunked(add_chunked<1, false>, 1, "add chunked, unroll 1, plain");
  bias(bias_chunked<4, true>, 4, "bias chunked, unroll 4, streaming");
  bias(bias_chunked<4, false>, 4, "bias chunked, unroll 4, plain");
  bias(bias_chunked<2, false>, 2, "bias chunked, unroll 2, plain");
  bias(bias_chunked<1, false>, 1, "bias chunked, unroll 1, plain");
  return 0;
}
