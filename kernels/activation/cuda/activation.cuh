// Activation kernel templates (manifest/activation.yaml): SiLU and GELU (erf and tanh forms),
// elementwise and gated, computing in float32 and rounding to T once, with the formulas of the
// CPU reference (activation_cpu.hpp). Framework-free: plain pointers and sizes;
// activation_unary.cu and activation_gated.cu instantiate them.
//
// Note [Activation kernels]
// The elementwise ops run as one run of elements:
//   vector   16-byte aligned pointers: kActivationUnroll independent 16-byte vectors per thread per
//            iteration, every load issued before the first store, streamed (ld.global.cs /
//            st.global.cs), on a grid sized to the device;
//   general  one element at a time (misaligned pointers).
// The gated ops walk rows of x = [gate | up] (2 N elements) and out (N): a group of lanes shares a
// row (a power of two, enough for kActivationUnroll packs each; short rows share a block, long
// ones split into chunks), so the row index is found once per tile and the halves need no index
// arithmetic per element. The vector form reads 16-byte vectors from both halves and needs N's
// bytes to be a multiple of 16 (the call's row_alignment); the general form reads elements (odd
// N, misaligned pointers). Offsets are 64-bit. GELU uses the accurate erff / tanhf, SiLU the
// hardware exp2 and reciprocal: at full bandwidth an SM has ~30 instructions per bfloat16 element
// to spare, and the accurate expf and IEEE division would take a third of them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/activation/cuda/activation_launch.hpp"
#include "kernels/common/cuda/packed.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

inline constexpr int kActivationThreads = 256;
inline constexpr int kActivationUnroll = 4;
// Resident blocks per SM the registers are capped for: 1024 threads of the elementwise kernels,
// 768 of the gated ones (which keep more offsets live), each with up to 128 bytes of loads in
// flight, and no spills (ptxas -v, CUDA 13).
inline constexpr int kActivationMinBlocks = 4;
inline constexpr int kGatedMinBlocks = 3;

struct ActivationParams {
  const void* x = nullptr;
  void* out = nullptr;
  std::int64_t numel = 0;  // of out
  // The gated kernels: rows of N output elements, and their tiling.
  std::int64_t rows = 0;
  std::int64_t n = 0;
  int lane_shift = 0;
  std::int64_t chunks_per_row = 1;
  std::int64_t tiles = 0;
};

template <ActivationKind kKind>
__device__ __forceinline__ float activate(float g) {
  if constexpr (kKind == ActivationKind::kSilu) {
    // The hardware exp2 and reciprocal (a few ulp; the tests' float32 tolerance is 1e-5 of the
    // value): g / inf is 0 here, as the quotient tends to for g below -88.
    return __fdividef(g, 1.0f + __expf(-g));
  } else if constexpr (kKind == ActivationKind::kGeluErf) {
    constexpr float kInvSqrt2 = 0.70710678118654752440f;
    return 0.5f * g * (1.0f + erff(g * kInvSqrt2));
  } else {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    constexpr float kCubic = 0.044715f;
    return 0.5f * g * (1.0f + tanhf(kSqrt2OverPi * (g + kCubic * g * g * g)));
  }
}

template <ActivationKind kKind, class T>
__global__ void __launch_bounds__(kActivationThreads, kActivationMinBlocks)
    unary_vector_kernel(ActivationParams p) {
  constexpr int kN = Vec<T>::kSize;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t base = first; base < vectors; base += kActivationUnroll * stride) {
    uint4 v[kActivationUnroll];
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = base + u * stride;
      if (i < vectors) v[u] = load_packed_streaming(x + i * kN);
    }
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = base + u * stride;
      if (i < vectors)
        store_packed_streaming(out + i * kN,
                               map_packed<T>(v[u], [](float g) { return activate<kKind>(g); }));
    }
  }
  for (std::int64_t i = vectors * kN + first; i < p.numel; i += stride)
    out[i] = from_float<T>(activate<kKind>(to_float(x[i])));
}

template <ActivationKind kKind, class T>
__global__ void __launch_bounds__(kActivationThreads, kActivationMinBlocks)
    unary_general_kernel(ActivationParams p) {
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.numel; i += stride)
    out[i] = from_float<T>(activate<kKind>(to_float(x[i])));
}

// kVector: packs are 16-byte vectors (N's bytes a multiple of 16); else elements.
template <ActivationKind kKind, class T, bool kVector>
__global__ void __launch_bounds__(kActivationThreads, kGatedMinBlocks)
    gated_kernel(ActivationParams p) {
  constexpr int kPack = kVector ? Vec<T>::kSize : 1;
  using Pack = std::conditional_t<kVector, uint4, T>;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const int lanes = 1 << p.lane_shift;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int group = static_cast<int>(threadIdx.x) >> p.lane_shift;
  const int groups = kActivationThreads >> p.lane_shift;
  const std::int64_t packs = p.n / kPack;
  for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    const std::int64_t row_block = tile / p.chunks_per_row;
    const std::int64_t chunk = tile - row_block * p.chunks_per_row;
    const std::int64_t row = row_block * groups + group;
    if (row >= p.rows) continue;
    const T* gate = x + row * 2 * p.n;
    const T* up = gate + p.n;
    T* out_row = out + row * p.n;
    const std::int64_t first = chunk * (std::int64_t{lanes} * kActivationUnroll) + lane;
    Pack g[kActivationUnroll], v[kActivationUnroll];
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < packs) {
        if constexpr (kVector) {
          g[u] = load_packed_streaming(gate + i * kPack);
          v[u] = load_packed_streaming(up + i * kPack);
        } else {
          g[u] = gate[i];
          v[u] = up[i];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < packs) {
        if constexpr (kVector)
          store_packed_streaming(
              out_row + i * kPack,
              map_packed<T>(g[u], v[u], [](float a, float b) { return activate<kKind>(a) * b; }));
        else
          out_row[i] = from_float<T>(activate<kKind>(to_float(g[u])) * to_float(v[u]));
      }
    }
  }
}

}  // namespace tileops::kernels::cuda
