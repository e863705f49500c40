// An experiment, not part of the library: RMSNorm (bfloat16, weight given) written with the knobs
// that could move the norm kernels of kernels/norm/cuda/ closer to the copy ceiling, each timed
// the way `tileops bench` times (rotated buffers beyond the L2, batches of back-to-back launches
// between CUDA events, the median batch), beside a vectorised copy of the same bytes.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/norm_variants.cu -o build/norm_variants && build/norm_variants
//
// Knobs: vectors per thread (the row in registers: threads per row = vectors / kVpt), the grid
// (persistent, sized to the device, or one block per row), the load and store cache hints, the
// next row's loads issued before this row's reduction (persistent grids only), programmatic
// dependent launch (the next launch starts while this one drains), and how the weight arrives
// (after the reduction, prefetched, or in registers with the row). Weights rotate with the inputs,
// and cases under 1 Mi elements replay from a CUDA graph beside an empty kernel, as `tileops
// bench` does. main() runs the comparison behind Note [Few rows] (kernels/norm/cuda/norm.cuh);
// the earlier comparison of grids, hints and vectors per thread (Note [Norm grid]) used the same
// variant<...> calls with other knobs. Results: bench/results/2026-12-01-h200-norm-variants.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/vec.cuh"

using namespace tileops::kernels::cuda;
using T = __nv_bfloat16;
using V = Vec<T>;

enum Load { kLdcs, kLdg, kPlain };
enum Store { kStcs, kStPlain };
// How the weight reaches the row's second pass: read after the reduction; prefetched to L1 or L2
// with the row's loads; or loaded into registers with the row.
enum Weight { kAfter, kPrefetchL1, kPrefetchL2, kRegisters };

template <int kLoad>
__device__ __forceinline__ V load_x(const T* p) {
  if constexpr (kLoad == kLdcs) return load_vec_streaming(p);
  if constexpr (kLoad == kLdg) return load_vec(p);
  return load_vec_coherent(p);
}

template <class Vv>
__device__ __forceinline__ void opaque(Vv& v) {
  auto* words = reinterpret_cast<unsigned*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(words[i]));
}

template <int kVpt, int kLoad, int kStore, bool kPrefetch, bool kPdl, int kWeight = kAfter>
__global__ void __launch_bounds__(kVpt >= 8   ? 256
                                  : kVpt >= 4 ? 512
                                              : 1024)
    rms_kernel(const T* __restrict__ xs, const T* weight, T* out, long long rows, int n,
               float eps) {
  __shared__ BlockSumStorage storage;
  if constexpr (kPdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  const int n_vec = n / V::kSize;
  const int lanes = blockDim.x;
  const int lane = threadIdx.x;
  const float inv_n = 1.0f / n;
  V x[kVpt];
  auto load_row = [&](long long row) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = lane + j * lanes;
      x[j] = (row < rows && v < n_vec) ? load_x<kLoad>(xs + row * n + (long long)v * V::kSize)
                                       : zero_vec<T>();
    }
  };
  long long row = blockIdx.x;
  if (row >= rows) return;
  load_row(row);
  V wreg[kWeight == kRegisters ? kVpt : 1];
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int v = lane + j * lanes;
    if (v >= n_vec) continue;
    const T* wp = weight + (long long)v * V::kSize;
    if constexpr (kWeight == kPrefetchL1) asm volatile("prefetch.global.L1 [%0];" ::"l"(wp));
    if constexpr (kWeight == kPrefetchL2) asm volatile("prefetch.global.L2 [%0];" ::"l"(wp));
    if constexpr (kWeight == kRegisters) wreg[j] = load_vec(wp);
  }
  if constexpr (kPdl) asm volatile("griddepcontrol.launch_dependents;");
  for (; row < rows; row += gridDim.x) {
    float squares = 0.0f;
#pragma unroll
    for (int j = 0; j < kVpt; ++j)
#pragma unroll
      for (int e = 0; e < V::kSize; ++e) {
        const float v = to_float(x[j].v[e]);
        squares += v * v;
      }
    V cur[kVpt];
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      cur[j] = x[j];
      opaque(cur[j]);
    }
    if constexpr (kPrefetch) load_row(row + gridDim.x);
    const float scale = rsqrtf(block_sum(squares, storage) * inv_n + eps);
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int v = lane + j * lanes;
      if (v >= n_vec) continue;
      V w;
      if constexpr (kWeight == kRegisters)
        w = wreg[j];
      else
        w = load_vec(weight + (long long)v * V::kSize);
      V y;
#pragma unroll
      for (int e = 0; e < V::kSize; ++e)
        y.v[e] = from_float<T>(to_float(cur[j].v[e]) * scale * to_float(w.v[e]));
      T* dst = out + row * n + (long long)v * V::kSize;
      if constexpr (kStore == kStcs)
        store_vec_streaming(dst, y);
      else
        store_vec(dst, y);
    }
    if constexpr (!kPrefetch) load_row(row + gridDim.x);
  }
}

__global__ void empty_kernel() {}

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* dst, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

struct Shape {
  long long rows;
  int n;
};

struct Buffers {
  std::vector<T*> x, out, weight;  // one weight per set, as `tileops bench` rotates it
};

Buffers make(const Shape& s, int sets) {
  Buffers b;
  const size_t bytes = (size_t)s.rows * s.n * sizeof(T);
  std::vector<T> host((size_t)s.rows * s.n);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 500.0f - 1.0f);
  for (int i = 0; i < sets; ++i) {
    T *x, *o;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&o, bytes));
    CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
    b.x.push_back(x);
    b.out.push_back(o);
  }
  std::vector<T> w(s.n);
  for (int i = 0; i < s.n; ++i) w[i] = __float2bfloat16(0.5f + (i % 7) * 0.1f);
  for (int i = 0; i < sets; ++i) {
    T* wd;
    CHECK(cudaMalloc(&wd, s.n * sizeof(T)));
    CHECK(cudaMemcpy(wd, w.data(), s.n * sizeof(T), cudaMemcpyHostToDevice));
    b.weight.push_back(wd);
  }
  return b;
}

void release(Buffers& b) {
  for (T* p : b.x) CHECK(cudaFree(p));
  for (T* p : b.out) CHECK(cudaFree(p));
  for (T* p : b.weight) CHECK(cudaFree(p));
}

template <class Launch>
double time_us(Launch&& launch, int sets, cudaStream_t stream, bool graph = false) {
  return experiments::median_launch_us(launch, sets, std::max(20, 2 * sets), stream, graph);
}

template <int kVpt, int kLoad, int kStore, bool kPrefetch, bool kPdl, int kWeight = kAfter>
void variant(const char* name, const Shape& s, Buffers& b, int sets, bool persistent,
             cudaStream_t stream, int sms) {
  auto kernel = rms_kernel<kVpt, kLoad, kStore, kPrefetch, kPdl, kWeight>;
  const int vectors = s.n / V::kSize;
  const int threads = std::clamp((vectors / kVpt + 31) / 32 * 32, 32, 1024);
  if ((long long)threads * kVpt < vectors) return;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  long long blocks = s.rows;
  if (persistent) {
    const long long max_blocks = (long long)per_sm * sms;
    const long long waves = (s.rows + max_blocks - 1) / max_blocks;
    blocks = (s.rows + waves - 1) / waves;
  }
  auto launch = [&](int set) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)blocks);
    config.blockDim = dim3(threads);
    config.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attr;
    config.numAttrs = kPdl ? 1 : 0;
    CHECK(cudaLaunchKernelEx(&config, kernel, (const T*)b.x[set], (const T*)b.weight[set],
                             b.out[set], s.rows, s.n, 1e-6f));
  };
  const double us = time_us(launch, sets, stream, s.rows * s.n < (1 << 20));
  const double bytes = 2.0 * s.rows * s.n * sizeof(T) + s.n * sizeof(T);
  std::printf("%-34s [%6lld, %5d] %9.2f us %8.1f GB/s %6.1f%%  (threads %d, blocks %lld, %d/SM)\n",
              name, s.rows, s.n, us, bytes / us / 1e3, bytes / us / 1e3 / 4250 * 100, threads,
              blocks, per_sm);
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Shape shapes[] = {{1, 4096}, {2048, 4096}, {2048, 8192}, {2048, 16384}, {16384, 8192}};
  for (const Shape& s : shapes) {
    const double set_bytes = 2.0 * s.rows * s.n * sizeof(T);
    const int sets = std::min(4096, std::max(2, (int)(4 * 50e6 / set_bytes) + 1));
    Buffers b = make(s, sets);
    if (s.rows == 1) {  // the floor of a launch-bound case: an empty kernel from a graph
      auto launch = [&](int) { empty_kernel<<<1, 32, 0, stream>>>(); };
      std::printf("%-34s [%6lld, %5d] %9.2f us\n", "empty kernel (graph)", s.rows, s.n,
                  time_us(launch, sets, stream, true));
    }
    variant<4, kLdcs, kStcs, false, false, kAfter>("persistent, weight after", s, b, sets, true,
                                                   stream, sms);
    variant<4, kLdcs, kStcs, false, false, kPrefetchL1>("persistent, prefetch L1", s, b, sets, true,
                                                        stream, sms);
    variant<4, kLdcs, kStcs, false, false, kAfter>("per-row, weight after", s, b, sets, false,
                                                   stream, sms);
    variant<4, kLdcs, kStcs, false, false, kPrefetchL1>("per-row, prefetch L1", s, b, sets, false,
                                                        stream, sms);
    variant<4, kLdcs, kStcs, false, false, kPrefetchL2>("per-row, prefetch L2", s, b, sets, false,
                                                        stream, sms);
    variant<4, kLdcs, kStcs, false, false, kRegisters>("per-row, weight in registers", s, b, sets,
                                                       false, stream, sms);
    variant<2, kLdcs, kStcs, false, false, kAfter>("per-row vpt2, weight after", s, b, sets, false,
                                                   stream, sms);
    variant<2, kLdcs, kStcs, false, false, kRegisters>("per-row vpt2, weight in registers", s, b,
                                                       sets, false, stream, sms);
    variant<4, kLdcs, kStcs, false, true, kAfter>("persistent pdl, weight after", s, b, sets, true,
                                                  stream, sms);
    release(b);
  }
  return 0;
}
