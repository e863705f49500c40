// Elementwise float math on 16-byte vectors held as raw uint4 registers. Holding a vector as
// Vec<__nv_bfloat16> makes the compiler move it as eight 16-bit values; unrolled kernels that
// keep several of them in flight then ran out of registers and spilled (ptxas, sm_90a, CUDA 13).
// As raw 32-bit words a vector is four registers, and 16-bit types convert two elements at a time
// (one cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32 per pair). Each element computes in float32 and
// rounds to T once, as vec.cuh's conversions do. Framework-free, like vec.cuh.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

__device__ __forceinline__ uint4 load_packed(const void* p) {
  return __ldg(static_cast<const uint4*>(p));
}
__device__ __forceinline__ uint4 load_packed_streaming(const void* p) {
  return __ldcs(static_cast<const uint4*>(p));
}
__device__ __forceinline__ void store_packed_streaming(void* p, uint4 v) {
  __stcs(static_cast<uint4*>(p), v);
}
__device__ __forceinline__ void store_packed(void* p, uint4 v) { *static_cast<uint4*>(p) = v; }

// The two float values of a 32-bit word holding two 16-bit floats (low element first).
template <class T>
__device__ __forceinline__ float2 unpack_pair(std::uint32_t w) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  } else {
    static_assert(std::is_same_v<T, __half>);
    const __half2 h = __halves2half2(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu)),
                                     __ushort_as_half(static_cast<unsigned short>(w >> 16)));
    return __half22float2(h);
  }
}

// Two floats rounded to nearest even into one word of two 16-bit floats.
template <class T>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
    return static_cast<std::uint32_t>(__bfloat16_as_ushort(p.x)) |
           static_cast<std::uint32_t>(__bfloat16_as_ushort(p.y)) << 16;
  } else {
    static_assert(std::is_same_v<T, __half>);
    const __half2 p = __floats2half2_rn(lo, hi);
    return static_cast<std::uint32_t>(__half_as_ushort(__low2half(p))) |
           static_cast<std::uint32_t>(__half_as_ushort(__high2half(p))) << 16;
  }
}

// One 32-bit word of T elements (two 16-bit floats or one float32) through f.
template <class T, class F>
__device__ __forceinline__ std::uint32_t map_word(std::uint32_t x, F f) {
  if constexpr (std::is_same_v<T, float>) {
    return __float_as_uint(f(__uint_as_float(x)));
  } else {
    const float2 a = unpack_pair<T>(x);
    return pack_pair<T>(f(a.x), f(a.y));
  }
}
template <class T, class F>
__device__ __forceinline__ std::uint32_t map_word(std::uint32_t x, std::uint32_t y, F f) {
  if constexpr (std::is_same_v<T, float>) {
    return __float_as_uint(f(__uint_as_float(x), __uint_as_float(y)));
  } else {
    const float2 a = unpack_pair<T>(x);
    const float2 b = unpack_pair<T>(y);
    return pack_pair<T>(f(a.x, b.x), f(a.y, b.y));
  }
}

// z[i] = f(x[i]) over a vector of T in {float16, bfloat16, float32}.
template <class T, class F>
__device__ __forceinline__ uint4 map_packed(uint4 x, F f) {
  return make_uint4(map_word<T>(x.x, f), map_word<T>(x.y, f), map_word<T>(x.z, f),
                    map_word<T>(x.w, f));
}
// z[i] = f(x[i], y[i]).
template <class T, class F>
__device__ __forceinline__ uint4 map_packed(uint4 x, uint4 y, F f) {
  return make_uint4(map_word<T>(x.x, y.x, f), map_word<T>(x.y, y.y, f), map_word<T>(x.z, y.z, f),
                    map_word<T>(x.w, y.w, f));
}

// A vector of T all of whose elements are `value`.
template <class T>
__device__ __forceinline__ uint4 splat_packed(T value) {
  if constexpr (sizeof(T) == 2) {
    std::uint32_t bits = 0;
    static_assert(sizeof(value) == 2);
    memcpy(&bits, &value, 2);
    bits |= bits << 16;
    return make_uint4(bits, bits, bits, bits);
  } else if constexpr (sizeof(T) == 4) {
    std::uint32_t bits = 0;
    memcpy(&bits, &value, 4);
    return make_uint4(bits, bits, bits, bits);
  } else {
    std::uint64_t bits = 0;
    memcpy(&bits, &value, 8);
    const auto lo = static_cast<std::uint32_t>(bits), hi = static_cast<std::uint32_t>(bits >> 32);
    return make_uint4(lo, hi, lo, hi);
  }
}

}  // namespace tileops::kernels::cuda
