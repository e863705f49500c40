// Binary elementwise kernel templates (manifest/elementwise.yaml): out = a + alpha * b and
// out = a * b, float types in float32 rounded once to T, integer types wrapping. Framework-free:
// plain pointers and sizes; binary_launch.cu instantiates and launches them.
//
// Two paths: same-shape inputs with 16-byte aligned pointers run on 16-byte vectors (the tail
// below one vector element by element); broadcasting inputs (or misaligned ones) decode each
// output element's coordinates and read the inputs through strides that are 0 on broadcast axes.
// Indices are 64-bit.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

enum class BinaryKind { kAdd, kMul };

inline constexpr int kMaxBinaryRank = 8;

struct BinaryParams {
  void* out = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  std::int64_t numel = 0;
  float alpha = 1.0f;          // float types
  std::int64_t alpha_int = 1;  // integer types
  // The broadcast path: out's shape, and the inputs' strides against it (0 where they broadcast).
  int rank = 0;
  std::int64_t shape[kMaxBinaryRank] = {};
  std::int64_t a_strides[kMaxBinaryRank] = {};
  std::int64_t b_strides[kMaxBinaryRank] = {};
};

template <BinaryKind kKind, class T>
__device__ __forceinline__ T apply(T a, T b, const BinaryParams& p) {
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic wraps by definition; converting back to T is modular.
    using U = std::make_unsigned_t<T>;
    if constexpr (kKind == BinaryKind::kAdd)
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(p.alpha_int) * static_cast<U>(b));
    else
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    if constexpr (kKind == BinaryKind::kAdd)
      return from_float<T>(to_float(a) + p.alpha * to_float(b));
    else
      return from_float<T>(to_float(a) * to_float(b));
  }
}

template <BinaryKind kKind, class T>
__global__ void binary_vector_kernel(BinaryParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t i = first; i < vectors; i += stride) {
    const V x = load_vec_streaming(a + i * kN);
    const V y = load_vec_streaming(b + i * kN);
    V z;
#pragma unroll
    for (int e = 0; e < kN; ++e) z.v[e] = apply<kKind>(x.v[e], y.v[e], p);
    store_vec_streaming(out + i * kN, z);
  }
  for (std::int64_t i = vectors * kN + first; i < p.numel; i += stride)
    out[i] = apply<kKind>(a[i], b[i], p);
}

template <BinaryKind kKind, class T>
__global__ void binary_broadcast_kernel(BinaryParams p) {
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.numel; i += stride) {
    std::int64_t rest = i, ai = 0, bi = 0;
    for (int axis = p.rank - 1; axis >= 0; --axis) {
      const std::int64_t index = rest % p.shape[axis];
      rest /= p.shape[axis];
      ai += index * p.a_strides[axis];
      bi += index * p.b_strides[axis];
    }
    out[i] = apply<kKind>(a[ai], b[bi], p);
  }
}

}  // namespace tileops::kernels::cuda
