// What the CUDA kernel templates share: element types, float32 conversions, 16-byte vectors and
// the cache-hinted accesses. Framework-free: plain types and pointers only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tileops::kernels::cuda {

// float32 is the compute type of every float kernel (the manifest's opmath).
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// One rounding, to nearest even, as torch and the CPU kernels round.
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Sixteen bytes of T: the unit of every vectorised access (LDG.E.128 / STG.E.128).
template <class T>
struct alignas(16) Vec {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

// Read-only, reused data (weights, biases): through the read-only path, kept in L2.
template <class T>
__device__ __forceinline__ Vec<T> load_vec(const T* p) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  return *reinterpret_cast<const Vec<T>*>(&raw);
}
// A plain load: coherent with this kernel's own stores (data it reads and writes).
template <class T>
__device__ __forceinline__ Vec<T> load_vec_coherent(const T* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  return *reinterpret_cast<const Vec<T>*>(&raw);
}
// Data read once (a norm's input rows): streamed, evict-first, so that it does not push the
// weights out of L2.
template <class T>
__device__ __forceinline__ Vec<T> load_vec_streaming(const T* p) {
  const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
  return *reinterpret_cast<const Vec<T>*>(&raw);
}
template <class T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T>& v) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&v);
}
// Data written once and not read again by this kernel (outputs): streamed.
template <class T>
__device__ __forceinline__ void store_vec_streaming(T* p, const Vec<T>& v) {
  __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<const uint4*>(&v));
}

template <class T>
__device__ __forceinline__ Vec<T> zero_vec() {
  Vec<T> z;
#pragma unroll
  for (int i = 0; i < Vec<T>::kSize; ++i) z.v[i] = from_float<T>(0.0f);
  return z;
}

}  // namespace tileops::kernels::cuda
