// An experiment, not part of the library: what gpt-j's prefill RoPE (interleaved, rotary dim 64 of
// 256: query [2048, 16, 256] and key [2048, 16, 256], bfloat16, int64 positions into a 2048-row
// cache) can reach, against passes that move the same bytes without rotating them. Each is timed
// the way `tileops bench` times (inputs rotated beyond 4x the L2, batches of back-to-back
// dependent launches between CUDA events, the median batch):
//
//   library G=n      the library's rope_kernel on the interleaved vector path, n chunks a thread
//   strided G=n      the same cut and the same accesses (streaming 16-byte loads and stores of
//                    the first 128 bytes of every 512-byte head row), no positions, no cache rows
//   contiguous v=n   the same number of bytes read and written in place, contiguous, n vectors a
//                    thread
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude -Isrc \
//        bench/experiments/rope_interleaved_floor.cu -o build/rope_interleaved_floor
//
// The passes write back what they read: a store is a store to the memory system whatever it
// holds. The library kernel's answers are checked by the GPU tests (CudaRope*), not here.
// Results: bench/results/2026-12-04-h200-rope-amax.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/rope/cuda/rope.cuh"

using namespace tileops::kernels::cuda;
using T = __nv_bfloat16;
using I = long long;

namespace {

constexpr int kTokens = 2048, kHeads = 32, kHead = 256, kRotary = 64, kCacheRows = 2048;
constexpr int kV = 8;                   // elements of a 16-byte vector
constexpr int kChunks = kRotary / kV;   // vectors rotated a head
constexpr double kCeilingGBs = 4250.0;  // the H200's copy ceiling (docs/cuda.md)

struct Set {
  T* query = nullptr;
  T* key = nullptr;
  I* positions = nullptr;
};

// The strided pass: the library's cut (token, head, group) with kGroup vectors a thread, chunks
// g, g + G, ... of the head's rotated columns, loaded and stored back.
template <int kGroup>
__global__ void __launch_bounds__(256) strided_pass(T* query, T* key, int q_heads) {
  constexpr int groups = kChunks / kGroup;
  const unsigned total = kTokens * kHeads * groups;
  const unsigned i = blockIdx.x * 256 + threadIdx.x;
  tileops::kernels::cuda::begin_dependent_kernel();
  if (i >= total) return;
  const unsigned group = i % groups, head_of_token = i / groups;
  const unsigned head = head_of_token % kHeads, token = head_of_token / kHeads;
  T* row =
      head < static_cast<unsigned>(q_heads)
          ? query + (static_cast<long long>(token) * q_heads + head) * kHead
          : key + (static_cast<long long>(token) * (kHeads - q_heads) + head - q_heads) * kHead;
  Vec<T> data[kGroup];
#pragma unroll
  for (int k = 0; k < kGroup; ++k) data[k] = load_vec_streaming(row + (group + k * groups) * kV);
#pragma unroll
  for (int k = 0; k < kGroup; ++k) store_vec_streaming(row + (group + k * groups) * kV, data[k]);
}

// The contiguous pass: `vectors` 16-byte vectors from the start of x, kPer a thread (a block's
// threads take adjacent vectors in each of its kPer rounds).
template <int kPer>
__global__ void __launch_bounds__(256) contiguous_pass(T* x, unsigned vectors) {
  tileops::kernels::cuda::begin_dependent_kernel();
  const unsigned first = blockIdx.x * 256 * kPer + threadIdx.x;
  Vec<T> data[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (first + k * 256 < vectors) data[k] = load_vec_streaming(x + (first + k * 256) * kV);
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (first + k * 256 < vectors) store_vec_streaming(x + (first + k * 256) * kV, data[k]);
}

unsigned next(unsigned& s) { return s = s * 1664525u + 1013904223u; }

double rotated_bytes() { return 2.0 * kTokens * kHeads * kRotary * sizeof(T); }

void report(const char* name, double us, double bytes) {
  const double gbs = bytes / us / 1e3;
  std::printf("%-24s %8.2f us %8.0f GB/s %6.1f%%\n", name, us, gbs, 100.0 * gbs / kCeilingGBs);
}

template <int kGroup>
void library(const std::vector<Set>& sets, const T* cache, cudaStream_t stream) {
  const double us = experiments::median_launch_us(
      [&](int s) {
        RopeParams p;
        p.positions = sets[s].positions;
        p.query = sets[s].query;
        p.key = sets[s].key;
        p.cache = cache;
        p.tokens = kTokens;
        p.q_heads = kHeads / 2;
        p.k_heads = kHeads / 2;
        p.head_size = kHead;
        p.half = kRotary / 2;
        p.cache_rows = kCacheRows;
        p.chunks = kChunks;
        p.groups = kChunks / kGroup;
        const unsigned blocks = (kTokens * kHeads * p.groups + 255) / 256;
        void* args[] = {&p};
        experiments::launch_kernel(reinterpret_cast<const void*>(
                                       &rope_kernel<InterleavedVector<T>, T, I, unsigned, kGroup>),
                                   dim3(blocks), dim3(256), 0, stream, args);
      },
      static_cast<int>(sets.size()), 20, stream);
  char name[32];
  std::snprintf(name, sizeof name, "library G=%d", kGroup);
  // The roofline's bytes: the rotated columns read and written, positions, the cache rows used.
  report(name, us, rotated_bytes() + kTokens * (sizeof(I) + kRotary * sizeof(T)));
}

template <int kGroup>
void strided(const std::vector<Set>& sets, cudaStream_t stream) {
  const double us = experiments::median_launch_us(
      [&](int s) {
        T* q = sets[s].query;
        T* k = sets[s].key;
        int q_heads = kHeads / 2;
        void* args[] = {&q, &k, &q_heads};
        const unsigned blocks = (kTokens * kHeads * (kChunks / kGroup) + 255) / 256;
        experiments::launch_kernel(reinterpret_cast<const void*>(&strided_pass<kGroup>),
                                   dim3(blocks), dim3(256), 0, stream, args);
      },
      static_cast<int>(sets.size()), 20, stream);
  char name[32];
  std::snprintf(name, sizeof name, "strided G=%d", kGroup);
  report(name, us, rotated_bytes());
}

template <int kPer>
void contiguous(const std::vector<Set>& sets, cudaStream_t stream) {
  unsigned vectors = static_cast<unsigned>(rotated_bytes() / 2 / 16);
  const double us = experiments::median_launch_us(
      [&](int s) {
        T* q = sets[s].query;
        void* args[] = {&q, &vectors};
        const unsigned blocks = (vectors + 256 * kPer - 1) / (256 * kPer);
        experiments::launch_kernel(reinterpret_cast<const void*>(&contiguous_pass<kPer>),
                                   dim3(blocks), dim3(256), 0, stream, args);
      },
      static_cast<int>(sets.size()), 20, stream);
  char name[32];
  std::snprintf(name, sizeof name, "contiguous v=%d", kPer);
  report(name, us, rotated_bytes());
}

}  // namespace

int main() {
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const size_t half_elements = static_cast<size_t>(kTokens) * (kHeads / 2) * kHead;
  const double set_bytes = 2.0 * half_elements * sizeof(T);
  const int sets_needed = static_cast<int>(std::max<double>(2, 4.0 * l2 / set_bytes + 1));
  unsigned seed = 2026u;
  std::vector<T> host(half_elements);
  std::vector<I> host_positions(kTokens);
  std::vector<Set> sets(sets_needed);
  for (Set& s : sets) {
    CHECK(cudaMalloc(&s.query, half_elements * sizeof(T)));
    CHECK(cudaMalloc(&s.key, half_elements * sizeof(T)));
    CHECK(cudaMalloc(&s.positions, kTokens * sizeof(I)));
    for (T* dst : {s.query, s.key}) {
      for (T& v : host) v = experiments::float_to_bf16((next(seed) >> 8) / 2097152.0f - 4.0f);
      CHECK(cudaMemcpy(dst, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    for (I& p : host_positions) p = next(seed) % kCacheRows;
    CHECK(cudaMemcpy(s.positions, host_positions.data(), kTokens * sizeof(I),
                     cudaMemcpyHostToDevice));
  }
  std::vector<T> host_cache(static_cast<size_t>(kCacheRows) * kRotary);
  for (T& v : host_cache) v = experiments::float_to_bf16((next(seed) >> 8) / 8388608.0f - 1.0f);
  T* cache = nullptr;
  CHECK(cudaMalloc(&cache, host_cache.size() * sizeof(T)));
  CHECK(
      cudaMemcpy(cache, host_cache.data(), host_cache.size() * sizeof(T), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  std::printf("gpt-j prefill, %d sets of %.1f MB; %.1f MB rotated a call\n", sets_needed,
              set_bytes / 1e6, rotated_bytes() / 1e6);
  for (int round = 0; round < 2; ++round) {
    library<1>(sets, cache, stream);
    library<2>(sets, cache, stream);
    library<4>(sets, cache, stream);
    strided<1>(sets, stream);
    strided<2>(sets, stream);
    strided<4>(sets, stream);
    contiguous<1>(sets, stream);
    contiguous<2>(sets, stream);
    contiguous<4>(sets, stream);
  }
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
