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
// A thread rotates one chunk of one head of one token (kGroup of them on the interleaved path,
// below): the work is (token, head, chunk) in that order, cut into blocks of kRopeThreads threads,
// as the elementwise kernels cut theirs (Note [Binary kernels] in
// kernels/elementwise/cuda/binary.cuh); query's heads come before key's. A thread issues its head's
// loads, then reads the token's position and the chunk of its cos/sin row (from L1 after the
// token's first head). Measured on the H200 (bench/experiments/rope_variants.cu, bfloat16
// rotate-half, query [16384, 32, 128] and key [16384, 8, 128]): 93.8% of the 4.25 TB/s copy
// ceiling, where the earlier block per token, whose threads each held two to four heads of one
// chunk with the cos/sin chunk kept across them, reached 78.1%: it needed 80 registers (three or
// four blocks per multiprocessor) and its threads waited on four loads at a time, while this
// kernel's 32 registers fill the multiprocessor with 2048 threads. The prefill shapes of 2048
// tokens went from 63.3% to 73.4% (Llama-3-8B heads) and from 68.2% to 82.8% (70B). Streaming hints
// beat plain accesses here by 0.3 to 2.5 points, unlike the elementwise kernels: every line of
// query and key is read and written once and nothing else is reused but the cache rows, which the
// hints keep out of the way of. Before its dependent wait each block asks for its heads' rotated
// columns in L2 (Note [Prefetch before the wait] in dependent_launch.cuh): 93.5 -> 97.9% on the
// bandwidth shape, 74.9 -> 86.1% (8B) and 82.9 -> 89.8% (70B) on the prefill shapes
// (bench/results/2026-12-02-h200-row-prefetch.md).
//
// The interleaved path's chunk is one 16-byte vector, half the neox path's two, so each of its
// threads rotates kRopeInterleavedGroup chunks of one head (chunks g, g + G, ... of G groups a
// head), its setup (token and head, position, cache row) once. gpt-j's prefill (rotary 64 of 256
// columns, 17 MB a call) on the H200 with 1, 2 and 4 chunks a thread: 61.5, 67.5 and 58.1% of
// 4.25 TB/s (bfloat16; float16 61.5, 73.2-74.6 and 51.7%): four leave half the multiprocessors'
// thread slots empty. A pass that only loads and stores the same bytes in the same pattern (the
// first 128 bytes of each 512-byte head row) reaches 63.5, 65.8 and 56.3%, and the same bytes
// contiguous 75-79% (bench/experiments/rope_interleaved_floor.cu,
// bench/results/2026-12-04-h200-rope-amax.md): the rotation costs nothing over its access
// pattern, whose partial rows cost DRAM about 12 points at this size.
//
// Indices are 32-bit when the chunks of the call number fewer than 2^31 (every model's call),
// 64-bit otherwise (Index); offsets into query and key are 64-bit either way. Columns R..D-1
// are never touched.
//
// A position outside [0, P) would read outside the cache: the token is skipped (its query and
// key rows stay as they were) and reported to the checking mode's record when there is one
// (Note [Kernel checking mode] in src/cuda/kernel_checks.hpp), by the thread of its first chunk.
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/kernel_check.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

// Threads per block (Note [RoPE kernels]).
inline constexpr int kRopeThreads = 256;
// Chunks a thread of the interleaved vector path rotates (Note [RoPE kernels]).
inline constexpr int kRopeInterleavedGroup = 2;

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
  std::int64_t chunks = 0;      // chunks per head (Note [RoPE kernels])
  std::int64_t groups = 0;      // groups of chunks per head, a thread's each (kGroup > 1)
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
  static constexpr bool kAligned = true;  // head rows 16-byte aligned (the path's refusal)
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
  static constexpr bool kAligned = true;
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
  static constexpr bool kAligned = false;  // any alignment
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

// One head of one token: query's heads come before key's.
template <class T>
struct HeadRow {
  std::int64_t token, head;
  T* row;
};
template <class T, class Index>
__device__ __forceinline__ HeadRow<T> head_row(const RopeParams& p, Index head_of_token,
                                               Index heads) {
  const auto head = static_cast<std::int64_t>(head_of_token % heads);
  const auto token = static_cast<std::int64_t>(head_of_token / heads);
  T* row = head < p.q_heads
               ? static_cast<T*>(p.query) + (token * p.q_heads + head) * p.head_size
               : static_cast<T*>(p.key) + (token * p.k_heads + (head - p.q_heads)) * p.head_size;
  return {token, head, row};
}

// Index: std::uint32_t when the call's chunks number fewer than 2^31, else std::uint64_t.
// kGroup: chunks a thread rotates, of one head (Note [RoPE kernels]); p.groups per head.
template <class Path, class T, class I, class Index, int kGroup = 1>
__global__ void __launch_bounds__(kRopeThreads) rope_kernel(RopeParams p) {
  const auto heads = static_cast<Index>(p.q_heads + p.k_heads);
  const auto chunks = static_cast<Index>(p.chunks);
  const auto groups = static_cast<Index>(kGroup == 1 ? p.chunks : p.groups);
  const Index total = static_cast<Index>(p.tokens) * heads * groups;
  const Index step = static_cast<Index>(gridDim.x) * kRopeThreads;
  const Index mine = static_cast<Index>(blockIdx.x) * kRopeThreads + threadIdx.x;
  // Before the wait, the thread of a head's first group (or of the block's first, which may fall
  // inside a head) asks for the head's rotated columns in L2 (Note [Prefetch before the wait] in
  // dependent_launch.cuh); aligned paths only. The positions and cache rows wait: which rows is
  // what the previous kernel may be writing.
  if constexpr (Path::kAligned) {
    if (mine < total && (mine % groups == 0 || threadIdx.x == 0))
      prefetch_l2(head_row<T>(p, mine / groups, heads).row,
                  static_cast<std::uint32_t>(2 * p.half * static_cast<std::int64_t>(sizeof(T))));
  }
  begin_dependent_kernel();
  for (Index i = mine; i < total; i += step) {
    const Index group = i % groups;
    const auto [token, head, row] = head_row<T>(p, i / groups, heads);
    // The group's chunks are group, group + groups, ...: a warp's lanes on one head read
    // adjacent chunks with each load.
    typename Path::Data data[kGroup];
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      const Index chunk = group + static_cast<Index>(k) * groups;
      if (chunk < chunks) data[k] = Path::load(row, static_cast<int>(chunk), p.half);
    }
    const auto position = static_cast<std::int64_t>(static_cast<const I*>(p.positions)[token]);
    if (position < 0 || position >= p.cache_rows) {
      // The loads are dropped: the token stays as it was.
      if (head == 0 && group == 0) report_kernel_check(p.check, token, position);
      continue;
    }
    const T* cache_row = static_cast<const T*>(p.cache) + position * 2 * p.half;
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      const Index chunk = group + static_cast<Index>(k) * groups;
      if (chunk >= chunks) continue;
      const auto c = static_cast<int>(chunk);
      Path::rotate_store(row, c, p.half, data[k], Path::cos_sin(cache_row, c, p.half));
    }
  }
}

}  // namespace tileops::kernels::cuda
