// Rotary embedding kernel templates (manifest/rope.yaml): query [N, Hq, D] and key [N, Hk, D]
// rotated in place by the rows of cos_sin_cache [P, R] that positions [N] name. Framework-free:
// plain pointers and sizes; rope_launch.cu instantiates and launches them.
//
// Note [RoPE kernels]
// One kernel, three ways of cutting a head's rotated columns into chunks (the paths):
//
//   NeoxVector         a chunk is two 16-byte vectors, at column c V and c V + R/2 (V elements
//                      of T per vector): the halves of rotate-half; R/2 a multiple of V
//   InterleavedVector  a chunk is one 16-byte vector holding V/2 adjacent pairs; R a multiple
//                      of V; its cos and sin are 8-byte loads
//   General            a chunk is one pair, element by element: any alignment, any even R
//
// A block takes blockDim.z tokens at a time; its threads are chunks (x) by heads (y). A thread
// keeps one chunk of the token's cos/sin row in registers and applies it to every head of query
// and key it visits (Hq + Hk heads, query's first), so the row is read once per token and thread,
// not once per head. A thread loads kHeadsInFlight heads before it rotates and stores any: four
// independent 16-byte loads in flight per thread for bfloat16 rotate-half (two heads of two
// vectors), eight for float16 and float32 rotate-half and four on the interleaved path. The
// kernel is held to 80 registers (three blocks of 256 threads per multiprocessor): bfloat16
// rotate-half spilled with four heads at 80 (its cos and sin stay widened to float32 across the
// heads), float16 and float32 fit them (80 and 72 registers). x, y and z are planned per call from
// the head counts (rope_launch.cu): y covers the heads in kHeadsInFlight passes, z fills the block
// to about 256 threads when a token has little work.
//
// The token's position is loaded first but read only after the thread has issued its query and
// key loads, which do not depend on it: the cos/sin row waits for the position, the query and key
// no longer do, so a token costs one memory latency for its data rather than two in a row when
// the position's row is in L2. The row is loaded again (from L1) on a thread's later passes of
// heads, which only many heads per token with a wide rotary dimension take.
//
// The grid is one block per group of z tokens, not a persistent grid: every token costs the
// same, so the block scheduler balances them as well as any split could, and a persistent grid's
// last wave would leave a remainder of tokens on part of the device. Columns R..D-1 are never
// touched. Offsets are 64-bit.
//
// A position outside [0, P) would read outside the cache: the token is skipped (its query and
// key rows stay as they were) and reported to the checking mode's record when there is one
// (Note [Kernel checking mode] in src/cuda/kernel_checks.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/kernel_check.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

// Threads per block at most (rope_launch.cu plans within it), and the blocks of that size a
// multiprocessor must hold: the register cap (Note [RoPE kernels]).
inline constexpr int kRopeMaxThreads = 256;
inline constexpr int kRopeMinBlocksPerSm = 3;

struct RopeParams {
  const void* positions = nullptr;
  void* query = nullptr;
  void* key = nullptr;
  const void* cache = nullptr;
  std::int64_t tokens = 0;
  std::int64_t q_heads = 0;
  std::int64_t k_heads = 0;
  std::int64_t head_size = 0;   // D
  std::int64_t half = 0;        // R / 2
  std::int64_t cache_rows = 0;  // P
  int chunks = 0;               // chunks per head (Note [RoPE kernels])
  KernelCheckRecord* check = nullptr;
};

// One pair rotated in float32, rounded to T once.
template <class T>
__device__ __forceinline__ void rotate_pair(T& x1, T& x2, float c, float s) {
  const float a = to_float(x1), b = to_float(x2);
  x1 = from_float<T>(a * c - b * s);
  x2 = from_float<T>(b * c + a * s);
}

template <class T>
struct NeoxVector {
  static constexpr int kV = Vec<T>::kSize;
  // Two vectors each. bfloat16 keeps two heads: with four it spilled at 80 registers (its cos and
  // sin are held widened to float32 across the heads); float16 and float32 fit four in 80 and 72.
  static constexpr int kHeadsInFlight = std::is_same_v<T, __nv_bfloat16> ? 2 : 4;
  struct Data {
    Vec<T> x1, x2;
  };
  struct CosSin {
    Vec<T> c, s;
  };
  static __device__ __forceinline__ CosSin cos_sin(const T* row, int chunk, std::int64_t half) {
    return {load_vec(row + chunk * kV), load_vec(row + half + chunk * kV)};
  }
  static __device__ __forceinline__ Data load(const T* head, int chunk, std::int64_t half) {
    return {load_vec_streaming(head + chunk * kV), load_vec_streaming(head + half + chunk * kV)};
  }
  static __device__ __forceinline__ void rotate_store(T* head, int chunk, std::int64_t half, Data d,
                                                      const CosSin& cs) {
#pragma unroll
    for (int e = 0; e < kV; ++e)
      rotate_pair(d.x1.v[e], d.x2.v[e], to_float(cs.c.v[e]), to_float(cs.s.v[e]));
    store_vec_streaming(head + chunk * kV, d.x1);
    store_vec_streaming(head + half + chunk * kV, d.x2);
  }
};

// Half a vector of T: the cos (or sin) of the V/2 pairs of one interleaved vector.
template <class T>
struct alignas(8) HalfVec {
  T v[Vec<T>::kSize / 2];
};
template <class T>
__device__ __forceinline__ HalfVec<T> load_half_vec(const T* p) {
  const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p));
  return *reinterpret_cast<const HalfVec<T>*>(&raw);
}

template <class T>
struct InterleavedVector {
  static constexpr int kV = Vec<T>::kSize;
  static constexpr int kHeadsInFlight = 4;
  using Data = Vec<T>;
  struct CosSin {
    HalfVec<T> c, s;
  };
  static __device__ __forceinline__ CosSin cos_sin(const T* row, int chunk, std::int64_t half) {
    return {load_half_vec(row + chunk * (kV / 2)), load_half_vec(row + half + chunk * (kV / 2))};
  }
  static __device__ __forceinline__ Data load(const T* head, int chunk, std::int64_t) {
    return load_vec_streaming(head + chunk * kV);
  }
  static __device__ __forceinline__ void rotate_store(T* head, int chunk, std::int64_t, Data d,
                                                      const CosSin& cs) {
#pragma unroll
    for (int e = 0; e < kV / 2; ++e)
      rotate_pair(d.v[2 * e], d.v[2 * e + 1], to_float(cs.c.v[e]), to_float(cs.s.v[e]));
    store_vec_streaming(head + chunk * kV, d);
  }
};

template <class T, bool kNeox>
struct GeneralPair {
  static constexpr int kHeadsInFlight = 4;
  struct Data {
    T x1, x2;
  };
  struct CosSin {
    float c, s;
  };
  static __device__ __forceinline__ std::int64_t first(int chunk, std::int64_t) {
    return kNeox ? chunk : 2 * std::int64_t{chunk};
  }
  static __device__ __forceinline__ std::int64_t second(int chunk, std::int64_t half) {
    return kNeox ? chunk + half : 2 * std::int64_t{chunk} + 1;
  }
  static __device__ __forceinline__ CosSin cos_sin(const T* row, int chunk, std::int64_t half) {
    return {to_float(row[chunk]), to_float(row[half + chunk])};
  }
  static __device__ __forceinline__ Data load(const T* head, int chunk, std::int64_t half) {
    return {head[first(chunk, half)], head[second(chunk, half)]};
  }
  static __device__ __forceinline__ void rotate_store(T* head, int chunk, std::int64_t half, Data d,
                                                      const CosSin& cs) {
    rotate_pair(d.x1, d.x2, cs.c, cs.s);
    head[first(chunk, half)] = d.x1;
    head[second(chunk, half)] = d.x2;
  }
};

template <class Path, class T, class I>
__global__ void __launch_bounds__(kRopeMaxThreads, kRopeMinBlocksPerSm) rope_kernel(RopeParams p) {
  const I* positions = static_cast<const I*>(p.positions);
  const T* cache = static_cast<const T*>(p.cache);
  // 32-bit head indices (launch_rope checks the count): 64-bit ones cost float16 a spill.
  const int heads = static_cast<int>(p.q_heads + p.k_heads);
  const std::int64_t rotary_dim = 2 * p.half;
  const std::int64_t token_step = static_cast<std::int64_t>(gridDim.x) * blockDim.z;
  for (std::int64_t token = static_cast<std::int64_t>(blockIdx.x) * blockDim.z + threadIdx.z;
       token < p.tokens; token += token_step) {
    // Read only after the query and key loads below are issued: they do not depend on it.
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
        // A position outside the cache leaves the token as it was (the loads are dropped).
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
    if ((position < 0 || position >= p.cache_rows) && threadIdx.x == 0 && threadIdx.y == 0)
      report_kernel_check(p.check, token, position);
  }
}

}  // namespace tileops::kernels::cuda
