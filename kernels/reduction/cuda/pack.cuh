// kN consecutive elements of T as one access: a 16-byte vector (kN == Vec<T>::kSize, the fast
// paths) or a single element (the general paths: any alignment, any length), so that both share
// one kernel template. Framework-free.
#pragma once

#include <type_traits>

#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda::reduction {

template <class T, int kN>
struct Pack {
  static constexpr int kSize = kN;
  static constexpr bool kVector = kN == Vec<T>::kSize && kN > 1;
  T v[kN];

  __device__ static Pack from(const Vec<T>& vec) {
    Pack p;
#pragma unroll
    for (int e = 0; e < kN; ++e) p.v[e] = vec.v[e];
    return p;
  }
  // Data read once: evict-first, so that it does not push out what will be read again.
  __device__ static Pack load_once(const T* at) {
    if constexpr (kVector) {
      return from(load_vec_streaming(at));
    } else {
      Pack p;
#pragma unroll
      for (int e = 0; e < kN; ++e) p.v[e] = at[e];
      return p;
    }
  }
  // load_once's bytes as loaded, unpacked by from_raw where they are used: a vector stays in 4
  // registers in between, where a Pack of 16-bit elements may take 8 (the column kernel's 8
  // vectors in flight took 128 registers as Packs, 64 as raw words).
  using Raw = std::conditional_t<kVector, uint4, Pack>;
  __device__ static Raw load_raw_once(const T* at) {
    if constexpr (kVector) {
      return __ldcs(reinterpret_cast<const uint4*>(at));
    } else {
      return load_once(at);
    }
  }
  __device__ static Pack from_raw(const Raw& raw) {
    if constexpr (kVector) {
      return from(*reinterpret_cast<const Vec<T>*>(&raw));
    } else {
      return raw;
    }
  }
  // Data read again soon (the first pass of a row read twice): kept in L2.
  __device__ static Pack load_kept(const T* at) {
    if constexpr (kVector) {
      return from(load_vec(at));
    } else {
      Pack p;
#pragma unroll
      for (int e = 0; e < kN; ++e) p.v[e] = __ldg(at + e);
      return p;
    }
  }
  // Outputs: written once, streamed.
  __device__ void store(T* at) const {
    if constexpr (kVector) {
      Vec<T> vec;
#pragma unroll
      for (int e = 0; e < kN; ++e) vec.v[e] = v[e];
      store_vec_streaming(at, vec);
    } else {
#pragma unroll
      for (int e = 0; e < kN; ++e) at[e] = v[e];
    }
  }
};

}  // namespace tileops::kernels::cuda::reduction
