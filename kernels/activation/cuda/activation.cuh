// Activation kernel templates (manifest/activation.yaml): SiLU and GELU (erf and tanh forms),
// elementwise and gated, computing in float32 and rounding to T once, with the formulas of the
// CPU reference (activation_cpu.hpp). Framework-free: plain pointers and sizes;
// activation_unary.cu and activation_gated.cu instantiate them.
//
// Note [Activation kernels]
// The elementwise ops run as one run of elements:
//   vector   16-byte aligned pointers: a block per chunk of kActivationThreads * kActivationUnroll
//            16-byte vectors, every load of a thread issued before its first store;
//   general  one element at a time (misaligned pointers).
// Every grid is one block per chunk, row tile or element group, and loads and stores carry no
// cache hint: on the H200 that measured 6 points of the copy ceiling above a persistent grid
// with streaming hints (Note [Binary kernels] in kernels/elementwise/cuda/binary.cuh).
// The gated ops walk rows of x = [gate | up] (2 N elements) and out (N): a group of lanes shares a
// row (a power of two, enough for kActivationUnroll packs each; short rows share a block, long
// ones split into chunks), so the row index is found once per tile and the halves need no index
// arithmetic per element. The vector form reads 16-byte vectors from both halves and needs N's
// bytes to be a multiple of 16 (the call's row_alignment); the general form reads elements (odd
// N, misaligned pointers). Offsets are 64-bit. SiLU uses the hardware exp2 and reciprocal; GELU
// the accurate erff / tanhf on float32, and on 16-bit types forms with the hardware exp2 and
// reciprocal too (gelu_erf_fast, activate's tanh branch): at full bandwidth an SM has ~31
// instructions per bfloat16 element (4 elements per clock, 128 lanes issued per clock), and erff
// alone took ~30 of them (SASS, CUDA 13), tanhf ~20; the fast forms take ~13 (erf) and ~6 (tanh).
//
// Note [Few blocks]
// A call too small to give every multiprocessor a block at kActivationUnroll packs per thread
// (decode: one row of 14336) is latency: each thread's loads go out together, but its packs are
// computed one after another, and SiLU's 32 elements a thread took about 0.5 us more than a
// multiply of the same row (1.66 against 1.18 us on the H200 with dependent launch,
// bench/results/2026-12-02-h200-dependent-launch.md). Such a call takes one pack per thread
// (ActivationParams::unroll = 1) in four times the blocks, all resident at once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/activation/cuda/activation_launch.hpp"
#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/packed.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

inline constexpr int kActivationThreads = 256;
inline constexpr int kActivationUnroll = 4;
// Resident blocks per SM the registers are capped for: 1024 threads (64 registers) of the
// elementwise and gated kernels, each with up to 128 bytes of loads in flight (the gated ones: 128
// KB per SM, as the same-shape binary kernel), and no spills (ptxas -v, CUDA 13). The 16-bit
// gated GELU (erf form) spills 8 bytes at 64 registers and keeps 768 threads (80 registers).
inline constexpr int kActivationMinBlocks = 4;
template <ActivationKind kKind, class T>
inline constexpr int kGatedMinBlocks =
    kKind == ActivationKind::kGeluErf && !std::is_same_v<T, float> ? 3 : 4;

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
  // Packs (16-byte vectors or elements) per thread and chunk, 1 to kActivationUnroll (Note [Few
  // blocks]).
  int unroll = kActivationUnroll;
};

// The hardware exp2 and reciprocal (MUFU, about 2 ulp and 1 ulp; subnormal results flush to 0),
// without the range checks of __fdividef and exp2f.
__device__ __forceinline__ float exp2_approx(float a) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}
__device__ __forceinline__ float rcp_approx(float a) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

// GELU's erf form for 16-bit results: x Phi(x) with Phi from erfc, so that the tail x < 0, where
// Phi(x) = erfc(z)/2 (z = |x|/sqrt 2) is small, keeps its relative accuracy. erfc(z) =
// 2 t 2^(-z^2 log2 e + P(t)) with t = 1/(1 + z/2) and P a degree-5 polynomial fitted (weighted
// least squares towards minimax, t in [0.15, 1], z <= 11.3; beyond, the exp2 underflows) to
// log2(erfcx(z) / 2t): relative error of erfc below 8e-6, and of the float32 result below 1.1e-5
// over every finite bfloat16 and float16 input with the MUFU errors at their worst, against half
// an ulp of at least 2^-12 of the value. Two MUFU operations and 13 FMA-pipe ones per element,
// where erff evaluates both of its polynomials and selects (about 30 instructions per element, the
// kernel's whole issue budget at full bandwidth). Results below 1e-5 in magnitude (x < -4.5) are
// under the tests' absolute tolerance, where float32 rounding of -z^2 dominates.
__device__ __forceinline__ float gelu_erf_fast(float x) {
  constexpr float kHalfOverSqrt2 = 0.35355339059327376220f;
  constexpr float kMinusHalfLog2e = -0.72134752044448170368f;
  const float t = rcp_approx(fmaf(fabsf(x), kHalfOverSqrt2, 1.0f));
  float p = 3.302570581e-01f;
  p = fmaf(p, t, -1.023724198e+00f);
  p = fmaf(p, t, 6.852471232e-01f);
  p = fmaf(p, t, 3.666861057e-01f);
  p = fmaf(p, t, 1.468788624e+00f);
  p = fmaf(p, t, -2.827243805e+00f);
  // erfc(z) / 2 = t 2^(-x^2 log2(e) / 2 + P(t)).
  const float half_erfc = t * exp2_approx(fmaf(x * kMinusHalfLog2e, x, p));
  return x * (x >= 0.0f ? 1.0f - half_erfc : half_erfc);
}

// kFast16: the result is rounded to a 16-bit type, whose half ulp (2^-9 or 2^-11 of the value)
// leaves room for hardware exp2 and reciprocal; float32 results keep the accurate erff / tanhf.
template <ActivationKind kKind, bool kFast16 = false>
__device__ __forceinline__ float activate(float g) {
  if constexpr (kKind == ActivationKind::kSilu) {
    // The hardware exp2 and reciprocal (a few ulp; the tests' float32 tolerance is 1e-5 of the
    // value): g / inf is 0 here, as the quotient tends to for g below -88.
    return __fdividef(g, 1.0f + __expf(-g));
  } else if constexpr (kKind == ActivationKind::kGeluErf) {
    if constexpr (kFast16) {
      return gelu_erf_fast(g);
    } else {
      constexpr float kInvSqrt2 = 0.70710678118654752440f;
      return 0.5f * g * (1.0f + erff(g * kInvSqrt2));
    }
  } else {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    constexpr float kCubic = 0.044715f;
    if constexpr (kFast16) {
      // (1 + tanh u) / 2 = 1 / (1 + e^{-2u}) = 1 / (1 + 2^(g (k1 + k2 g^2))), k1 = -2 sqrt(2/pi)
      // log2 e, k2 = 0.044715 k1: two MUFU operations and five FMA-pipe ones instead of tanhf's
      // sequence (about 27 instructions per element). Relative error below 1e-5 (the exponent's
      // float32 rounding at its largest, ~126, before 1 / (1 + 2^126) flushes to 0); g * 0 is
      // -0 for large negative g, as the reference's 0.5 g (1 + tanh u).
      constexpr float kK1 = -2.30220819814432f;
      constexpr float kK2 = -0.102943239580024f;
      return g * rcp_approx(1.0f + exp2_approx(g * fmaf(kK2, g * g, kK1)));
    } else {
      return 0.5f * g * (1.0f + tanhf(kSqrt2OverPi * (g + kCubic * g * g * g)));
    }
  }
}

// The activation of an element of T.
template <ActivationKind kKind, class T>
__device__ __forceinline__ float activate_as(float g) {
  return activate<kKind, !std::is_same_v<T, float>>(g);
}

template <ActivationKind kKind, class T>
__global__ void __launch_bounds__(kActivationThreads, kActivationMinBlocks)
    unary_vector_kernel(ActivationParams p) {
  constexpr int kN = Vec<T>::kSize;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  const std::int64_t chunk_vectors = std::int64_t{kActivationThreads} * p.unroll;
  // The block's first chunk, asked for while the previous kernel runs (Note [Prefetch before the
  // wait] in dependent_launch.cuh).
  if (threadIdx.x == 0) prefetch_vectors_l2(x, blockIdx.x * chunk_vectors, chunk_vectors, vectors);
  begin_dependent_kernel();
  for (std::int64_t chunk = blockIdx.x; chunk * chunk_vectors < vectors; chunk += gridDim.x) {
    const std::int64_t base = chunk * chunk_vectors + threadIdx.x;
    uint4 v[kActivationUnroll];
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = base + u * kActivationThreads;
      if (u < p.unroll && i < vectors) v[u] = load_packed(x + i * kN);
    }
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = base + u * kActivationThreads;
      if (u < p.unroll && i < vectors)
        store_packed(out + i * kN,
                     map_packed<T>(v[u], [](float g) { return activate_as<kKind, T>(g); }));
    }
  }
  // The elements past the last whole vector (fewer than one vector's worth): the first block's.
  if (blockIdx.x == 0)
    for (std::int64_t i = vectors * kN + threadIdx.x; i < p.numel; i += blockDim.x)
      out[i] = from_float<T>(activate_as<kKind, T>(to_float(x[i])));
}

template <ActivationKind kKind, class T>
__global__ void __launch_bounds__(kActivationThreads, kActivationMinBlocks)
    unary_general_kernel(ActivationParams p) {
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  begin_dependent_kernel();
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.numel; i += stride)
    out[i] = from_float<T>(activate_as<kKind, T>(to_float(x[i])));
}

// kVector: packs are 16-byte vectors (N's bytes a multiple of 16); else elements.
template <ActivationKind kKind, class T, bool kVector>
__global__ void __launch_bounds__(kActivationThreads, (kGatedMinBlocks<kKind, T>))
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
  // Lane 0 of each group asks for its row's gate and up packs of the block's first tile while the
  // previous kernel runs (Note [Prefetch before the wait] in dependent_launch.cuh).
  if (kVector && lane == 0 && blockIdx.x < p.tiles) {
    const std::int64_t row_block = blockIdx.x / p.chunks_per_row;
    const std::int64_t row = row_block * groups + group;
    const std::int64_t chunk = blockIdx.x - row_block * p.chunks_per_row;
    const std::int64_t span = std::int64_t{lanes} * p.unroll;
    if (row < p.rows) {
      prefetch_vectors_l2(x + row * 2 * p.n, chunk * span, span, packs);
      prefetch_vectors_l2(x + row * 2 * p.n + p.n, chunk * span, span, packs);
    }
  }
  begin_dependent_kernel();
  for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    const std::int64_t row_block = tile / p.chunks_per_row;
    const std::int64_t chunk = tile - row_block * p.chunks_per_row;
    const std::int64_t row = row_block * groups + group;
    if (row >= p.rows) continue;
    const T* gate = x + row * 2 * p.n;
    const T* up = gate + p.n;
    T* out_row = out + row * p.n;
    const std::int64_t first = chunk * (std::int64_t{lanes} * p.unroll) + lane;
    Pack g[kActivationUnroll], v[kActivationUnroll];
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (u < p.unroll && i < packs) {
        if constexpr (kVector) {
          g[u] = load_packed(gate + i * kPack);
          v[u] = load_packed(up + i * kPack);
        } else {
          g[u] = gate[i];
          v[u] = up[i];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kActivationUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (u < p.unroll && i < packs) {
        if constexpr (kVector)
          store_packed(out_row + i * kPack, map_packed<T>(g[u], v[u], [](float a, float b) {
                         return activate_as<kKind, T>(a) * b;
                       }));
        else
          out_row[i] = from_float<T>(activate_as<kKind, T>(to_float(g[u])) * to_float(v[u]));
      }
    }
  }
}

}  // namespace tileops::kernels::cuda
