// An experiment, not part of the library: rotate-half RoPE (bfloat16 query and key rotated in
// place, int64 positions into a 131072-row cos/sin cache) written with the knobs that could move
// kernels/rope/cuda/rope.cuh toward the copy ceiling, each timed the way `tileops bench` times
// (inputs rotated beyond 4x the L2, batches of back-to-back launches between CUDA events, the
// median batch), beside a vectorised copy of the same bytes.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude -Isrc \
//        bench/experiments/rope_variants.cu -o build/rope_variants && build/rope_variants
//
// Knobs: the cut of the work (the library's earlier block per token, or a thread per chunk of a
// head as the elementwise kernels cut theirs); the cache hints of the query and key accesses
// (streaming, or plain: Note [Binary kernels] found plain ones 2 points faster for elementwise
// ops); heads per thread in flight (kHeadsInFlight); the registers a thread may hold (the blocks
// of the planned size a multiprocessor must hold). variant_kernel is the earlier library kernel
// with its launch bounds as template parameters, its block shape planned as it was planned.
// Every variant is checked against a float64 rotation of three tokens before it is timed.
// Results: bench/results/2026-12-01-h200-rope-softmax-variants.md (the library's kernel is the
// flat cut since; the first run had no `library` row).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/rope/cuda/rope.cuh"

using namespace tileops::kernels::cuda;
using experiments::bf16_to_float;
using experiments::float_to_bf16;
using T = __nv_bfloat16;
using I = long long;

// The library's rotate-half path with streaming or plain (coherent, no hint) accesses, for the
// block-per-token kernel with kHeads heads in flight; with kPacked, cos and sin stay packed until
// a head uses them (the library's block-per-token kernel let the compiler widen them once).
template <int kHeads, bool kStreaming, bool kPacked = true>
struct NeoxVariant {
  static constexpr int kV = Vec<T>::kSize;
  static constexpr int kHeadsInFlight = kHeads;
  using Data = typename NeoxVector<T>::Data;
  using CosSin = typename NeoxVector<T>::CosSin;
  static __device__ __forceinline__ CosSin cos_sin(const T* row, int chunk, std::int64_t half) {
    return NeoxVector<T>::cos_sin(row, chunk, half);
  }
  static __device__ __forceinline__ Data load(const T* head, int chunk, std::int64_t half) {
    if constexpr (kStreaming) return NeoxVector<T>::load(head, chunk, half);
    return {load_vec_coherent(head + chunk * kV), load_vec_coherent(head + half + chunk * kV)};
  }
  static __device__ __forceinline__ void rotate_store(T* head, int chunk, std::int64_t half, Data d,
                                                      CosSin cs) {
    if constexpr (kPacked) {
      auto* words = reinterpret_cast<unsigned*>(&cs);
#pragma unroll
      for (int i = 0; i < 8; ++i) asm volatile("" : "+r"(words[i]));  // converted per head
    }
#pragma unroll
    for (int e = 0; e < kV; ++e)
      rotate_pair(d.x1.v[e], d.x2.v[e], to_float(cs.c.v[e]), to_float(cs.s.v[e]));
    if constexpr (kStreaming) {
      store_vec_streaming(head + chunk * kV, d.x1);
      store_vec_streaming(head + half + chunk * kV, d.x2);
    } else {
      store_vec(head + chunk * kV, d.x1);
      store_vec(head + half + chunk * kV, d.x2);
    }
  }
};

// The library's kernel before this experiment (a block per token: chunks by heads by tokens, each
// thread kHeadsInFlight heads of one chunk), with its launch bounds as parameters.
template <class Path, int kMaxThreads, int kMinBlocks>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks) variant_kernel(RopeParams p) {
  const I* positions = static_cast<const I*>(p.positions);
  const T* cache = static_cast<const T*>(p.cache);
  const int heads = static_cast<int>(p.q_heads + p.k_heads);
  const std::int64_t rotary_dim = 2 * p.half;
  const std::int64_t token_step = static_cast<std::int64_t>(gridDim.x) * blockDim.z;
  for (std::int64_t token = static_cast<std::int64_t>(blockIdx.x) * blockDim.z + threadIdx.z;
       token < p.tokens; token += token_step) {
    const auto position = static_cast<std::int64_t>(positions[token]);
    T* query = static_cast<T*>(p.query) + token * p.q_heads * p.head_size;
    T* key = static_cast<T*>(p.key) + token * p.k_heads * p.head_size;
    const auto head_of = [&](int h) {
      return h < p.q_heads ? query + h * p.head_size : key + (h - p.q_heads) * p.head_size;
    };
    for (int chunk = static_cast<int>(threadIdx.x); chunk < p.chunks;
         chunk += static_cast<int>(blockDim.x)) {
      for (int h0 = static_cast<int>(threadIdx.y); h0 < heads;
           h0 += static_cast<int>(blockDim.y) * Path::kHeadsInFlight) {
        typename Path::Data data[Path::kHeadsInFlight];
#pragma unroll
        for (int u = 0; u < Path::kHeadsInFlight; ++u) {
          const int h = h0 + u * static_cast<int>(blockDim.y);
          if (h < heads) data[u] = Path::load(head_of(h), chunk, p.half);
        }
        if (position < 0 || position >= p.cache_rows) continue;
        const typename Path::CosSin cs =
            Path::cos_sin(cache + position * rotary_dim, chunk, p.half);
#pragma unroll
        for (int u = 0; u < Path::kHeadsInFlight; ++u) {
          const int h = h0 + u * static_cast<int>(blockDim.y);
          if (h < heads) Path::rotate_store(head_of(h), chunk, p.half, data[u], cs);
        }
      }
    }
  }
}

// A thread per (token, head, chunk), flattened in that order, as the elementwise kernels cut
// their work (a block per 256 chunks, no loop): 32-bit indices (the experiment's cases have fewer
// than 2^31 chunks). The cos/sin row is read per thread, from L1 after the first head of a token.
template <bool kStreaming>
__global__ void __launch_bounds__(256) flat_kernel(RopeParams p) {
  using Path = NeoxVariant<1, kStreaming>;
  const unsigned heads = static_cast<unsigned>(p.q_heads + p.k_heads);
  const unsigned chunks = static_cast<unsigned>(p.chunks);
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= static_cast<unsigned>(p.tokens) * heads * chunks) return;
  const unsigned chunk = i % chunks;
  const unsigned head_of_token = i / chunks;
  const unsigned head = head_of_token % heads;
  const unsigned token = head_of_token / heads;
  T* row = head < p.q_heads
               ? static_cast<T*>(p.query) + (std::int64_t{token} * p.q_heads + head) * p.head_size
               : static_cast<T*>(p.key) +
                     (std::int64_t{token} * p.k_heads + (head - p.q_heads)) * p.head_size;
  const typename Path::Data d = Path::load(row, static_cast<int>(chunk), p.half);
  const auto position = static_cast<std::int64_t>(static_cast<const I*>(p.positions)[token]);
  if (position < 0 || position >= p.cache_rows) return;
  const typename Path::CosSin cs = Path::cos_sin(
      static_cast<const T*>(p.cache) + position * 2 * p.half, static_cast<int>(chunk), p.half);
  Path::rotate_store(row, static_cast<int>(chunk), p.half, d, cs);
}

struct Case {
  const char* label;
  long long tokens;
  int q_heads, k_heads;
};
constexpr int kHead = 128, kRotary = 128, kCacheRows = 131072;

static unsigned next(unsigned& seed) { return seed = seed * 1664525u + 1013904223u; }

struct Set {
  T* query;
  T* key;
  I* positions;
};

struct Problem {
  Case c;
  std::vector<Set> sets;
  T* cache = nullptr;
  std::vector<T> host_query, host_key, host_cache;  // set 0's inputs, for the check
  std::vector<I> host_positions;
  double bytes = 0;
};

static RopeParams params(const Problem& pr, const Set& s) {
  RopeParams p;
  p.positions = s.positions;
  p.query = s.query;
  p.key = s.key;
  p.cache = pr.cache;
  p.tokens = pr.c.tokens;
  p.q_heads = pr.c.q_heads;
  p.k_heads = pr.c.k_heads;
  p.head_size = kHead;
  p.half = kRotary / 2;
  p.cache_rows = kCacheRows;
  p.chunks = kRotary / 2 / Vec<T>::kSize;
  return p;
}

// Set 0's query and key back to their first values (the kernel rotates them in place).
static void restore(const Problem& pr) {
  CHECK(cudaMemcpy(pr.sets[0].query, pr.host_query.data(), pr.host_query.size() * sizeof(T),
                   cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(pr.sets[0].key, pr.host_key.data(), pr.host_key.size() * sizeof(T),
                   cudaMemcpyHostToDevice));
}

// The largest error of three tokens of set 0 against a float64 rotation, relative to the largest
// input magnitude of the head (rotations of values near zero have no meaningful relative error).
static double check(const Problem& pr) {
  const long long picks[3] = {0, pr.c.tokens / 2, pr.c.tokens - 1};
  double worst = 0.0;
  for (long long t : picks) {
    for (int which = 0; which < 2; ++which) {
      const int heads = which == 0 ? pr.c.q_heads : pr.c.k_heads;
      const std::vector<T>& host = which == 0 ? pr.host_query : pr.host_key;
      T* device = which == 0 ? pr.sets[0].query : pr.sets[0].key;
      std::vector<T> got(static_cast<size_t>(heads) * kHead);
      CHECK(cudaMemcpy(got.data(), device + t * heads * kHead, got.size() * sizeof(T),
                       cudaMemcpyDeviceToHost));
      const T* row = pr.host_cache.data() + pr.host_positions[t] * kRotary;
      for (int h = 0; h < heads; ++h) {
        const T* x = host.data() + (t * heads + h) * kHead;
        const T* y = got.data() + h * kHead;
        for (int i = 0; i < kRotary / 2; ++i) {
          const double c = bf16_to_float(row[i]), s = bf16_to_float(row[kRotary / 2 + i]);
          const double a = bf16_to_float(x[i]), b = bf16_to_float(x[i + kRotary / 2]);
          const double want[2] = {a * c - b * s, b * c + a * s};
          const double have[2] = {bf16_to_float(y[i]), bf16_to_float(y[i + kRotary / 2])};
          for (int k = 0; k < 2; ++k) {
            const double err = std::fabs(have[k] - want[k]) / 4.0;  // inputs lie in [-4, 4)
            if (!(err <= worst)) worst = err;                       // NaN sticks
          }
        }
      }
    }
  }
  return worst;
}

template <class Launch>
static float time_us(const Problem& pr, Launch launch) {
  return static_cast<float>(experiments::median_launch_us([&](int set) { launch(pr.sets[set]); },
                                                          static_cast<int>(pr.sets.size()), 20));
}

// Blocks planned as rope_launch.cu plans them, for kHeadsInFlight heads and kMaxThreads.
template <class Path, int kMaxThreads, int kMinBlocks>
static void variant(const char* name, Problem& pr, double copy_us) {
  const RopeParams base = params(pr, pr.sets[0]);
  const long long heads = pr.c.q_heads + pr.c.k_heads;
  const int x = static_cast<int>(std::min<long long>(base.chunks, 64));
  const int y = static_cast<int>(std::clamp<long long>(
      (heads + Path::kHeadsInFlight - 1) / Path::kHeadsInFlight, 1, kMaxThreads / x));
  const int z =
      static_cast<int>(std::clamp<long long>(256 / (x * y), 1, std::min(pr.c.tokens, 64LL)));
  const long long blocks = (pr.c.tokens + z - 1) / z;
  auto launch = [&](const Set& s) {
    variant_kernel<Path, kMaxThreads, kMinBlocks>
        <<<static_cast<unsigned>(blocks), dim3(x, y, z)>>>(params(pr, s));
  };
  restore(pr);
  launch(pr.sets[0]);
  CHECK(cudaDeviceSynchronize());
  const double err = check(pr);
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, variant_kernel<Path, kMaxThreads, kMinBlocks>, x * y * z, 0));
  const float us = time_us(pr, launch);
  std::printf(
      "%-20s %-36s %9.2f us %7.1f GB/s %6.1f%%  copy x%.3f  err %.1e  (block %dx%dx%d, %d/SM)\n",
      pr.c.label, name, us, pr.bytes / us / 1e3, pr.bytes / us / 1e3 / 4250.0 * 100.0, us / copy_us,
      err, x, y, z, per_sm);
}

template <bool kStreaming>
static void flat(const char* name, Problem& pr, double copy_us) {
  const long long work = pr.c.tokens * (pr.c.q_heads + pr.c.k_heads) * (kRotary / 2 / 8);
  const unsigned blocks = static_cast<unsigned>((work + 255) / 256);
  auto launch = [&](const Set& s) { flat_kernel<kStreaming><<<blocks, 256>>>(params(pr, s)); };
  restore(pr);
  launch(pr.sets[0]);
  CHECK(cudaDeviceSynchronize());
  const double err = check(pr);
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flat_kernel<kStreaming>, 256, 0));
  const float us = time_us(pr, launch);
  std::printf("%-20s %-36s %9.2f us %7.1f GB/s %6.1f%%  copy x%.3f  err %.1e  (block 256, %d/SM)\n",
              pr.c.label, name, us, pr.bytes / us / 1e3, pr.bytes / us / 1e3 / 4250.0 * 100.0,
              us / copy_us, err, per_sm);
}

// The library's kernel as it stands (rope.cuh: the flat cut, 32-bit indices).
static void library(const char* name, Problem& pr, double copy_us) {
  const long long work = pr.c.tokens * (pr.c.q_heads + pr.c.k_heads) * (kRotary / 2 / 8);
  const unsigned blocks = static_cast<unsigned>((work + kRopeThreads - 1) / kRopeThreads);
  const auto kernel = rope_kernel<NeoxVector<T>, T, I, std::uint32_t>;
  auto launch = [&](const Set& s) { kernel<<<blocks, kRopeThreads>>>(params(pr, s)); };
  restore(pr);
  launch(pr.sets[0]);
  CHECK(cudaDeviceSynchronize());
  const double err = check(pr);
  const float us = time_us(pr, launch);
  std::printf("%-20s %-36s %9.2f us %7.1f GB/s %6.1f%%  copy x%.3f  err %.1e\n", pr.c.label, name,
              us, pr.bytes / us / 1e3, pr.bytes / us / 1e3 / 4250.0 * 100.0, us / copy_us, err);
}

__global__ void copy_kernel(const T* x, T* out, long long vectors) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) store_vec(out + i * 8, load_vec(x + i * 8));
}

int main() {
  const Case cases[] = {{"bw-16384x32x128", 16384, 32, 8},
                        {"llama-8b-prefill", 2048, 32, 8},
                        {"llama-70b-prefill", 2048, 64, 8}};
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  unsigned seed = 2026u;
  // The cache as a model fills it: cos and sin of position * theta_i, theta_i = 10000^(-2i/R).
  std::vector<T> host_cache(static_cast<size_t>(kCacheRows) * kRotary);
  for (int p = 0; p < kCacheRows; ++p)
    for (int i = 0; i < kRotary / 2; ++i) {
      const double angle = p * std::pow(10000.0, -2.0 * i / kRotary);
      host_cache[static_cast<size_t>(p) * kRotary + i] = float_to_bf16(std::cos(angle));
      host_cache[static_cast<size_t>(p) * kRotary + kRotary / 2 + i] =
          float_to_bf16(std::sin(angle));
    }
  T* cache = nullptr;
  CHECK(cudaMalloc(&cache, host_cache.size() * sizeof(T)));
  CHECK(
      cudaMemcpy(cache, host_cache.data(), host_cache.size() * sizeof(T), cudaMemcpyHostToDevice));
  for (const Case& c : cases) {
    Problem pr;
    pr.c = c;
    pr.cache = cache;
    pr.host_cache = host_cache;
    const size_t q = static_cast<size_t>(c.tokens) * c.q_heads * kHead;
    const size_t k = static_cast<size_t>(c.tokens) * c.k_heads * kHead;
    const double set_bytes = (q + k) * sizeof(T);
    const int sets = static_cast<int>(std::max<double>(2, 4.0 * l2 / set_bytes + 1));
    pr.bytes = c.tokens * sizeof(I) + 2.0 * set_bytes + c.tokens * kRotary * sizeof(T);
    // Set 0 is drawn last, so the host vectors hold its inputs for the check.
    for (int s = sets - 1; s >= 0; --s) {
      pr.host_query.resize(q);
      pr.host_key.resize(k);
      pr.host_positions.resize(c.tokens);
      for (T& v : pr.host_query) v = float_to_bf16((next(seed) >> 8) / 2097152.0f - 4.0f);
      for (T& v : pr.host_key) v = float_to_bf16((next(seed) >> 8) / 2097152.0f - 4.0f);
      for (I& v : pr.host_positions) v = next(seed) % kCacheRows;
      Set set;
      CHECK(cudaMalloc(&set.query, q * sizeof(T)));
      CHECK(cudaMalloc(&set.key, k * sizeof(T)));
      CHECK(cudaMalloc(&set.positions, c.tokens * sizeof(I)));
      CHECK(cudaMemcpy(set.query, pr.host_query.data(), q * sizeof(T), cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(set.key, pr.host_key.data(), k * sizeof(T), cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(set.positions, pr.host_positions.data(), c.tokens * sizeof(I),
                       cudaMemcpyHostToDevice));
      pr.sets.insert(pr.sets.begin(), set);
    }
    // A copy of the query and key bytes (read and written once: the same traffic, no cache rows).
    T* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, q * sizeof(T)));
    const long long vectors = static_cast<long long>(q) / 8;
    const float copy_us =
        time_us(pr,
                [&](const Set& s) {
                  copy_kernel<<<static_cast<unsigned>((vectors + 255) / 256), 256>>>(
                      s.query, scratch, vectors);
                }) *
        (q + k) / q;
    std::printf("%-20s %-36s %9.2f us (query and key bytes, scaled from the query's)  (%d sets)\n",
                c.label, "copy", copy_us, sets);
    variant<NeoxVariant<2, true, false>, 256, 3>("block/token, 2 heads, streaming", pr, copy_us);
    variant<NeoxVariant<2, false>, 256, 3>("2 heads, plain", pr, copy_us);
    variant<NeoxVariant<4, false>, 256, 3>("4 heads, plain, packed cos/sin", pr, copy_us);
    variant<NeoxVariant<1, false>, 512, 4>("1 head, plain, 32 regs", pr, copy_us);
    variant<NeoxVariant<2, false>, 256, 4>("2 heads, plain, 64 regs", pr, copy_us);
    flat<false>("flat, plain", pr, copy_us);
    flat<true>("flat, streaming", pr, copy_us);
    library("library (flat, streaming)", pr, copy_us);
    CHECK(cudaFree(scratch));
    for (Set& s : pr.sets) {
      CHECK(cudaFree(s.query));
      CHECK(cudaFree(s.key));
      CHECK(cudaFree(s.positions));
    }
  }
  CHECK(cudaFree(cache));
  return 0;
}
