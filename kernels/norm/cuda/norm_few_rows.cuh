// The norm family's kernel for calls of a few rows of up to 2048 vectors (decode; Note [Few rows]
// in norm.cuh; the library launches it for FusedAddRMSNorm): a block per row, each thread reading
// kVpt vectors of x, the residual, the weight and the bias straight into registers, every load
// issued before the first reduction.
// Framework-free, like norm.cuh.
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/norm/cuda/norm.cuh"  // NormKind, NormParams, normalized

namespace tileops::kernels::cuda {

// One row per block (the grid covers the rows: fewer than the device's multiprocessors); a row of
// at most blockDim.x * kVpt vectors (launch_norm sizes the block so). Thread t holds the vectors
// t + k * blockDim.x, k < kVpt.
template <NormKind kKind, class T, int kVpt>
__global__ void __launch_bounds__(1024) norm_few_rows_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  const int n_vec = static_cast<int>(p.n / kN);
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * p.n;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = kKind == NormKind::kLayer ? static_cast<const T*>(p.bias) : nullptr;
  const float inv_n = 1.0f / static_cast<float>(p.n);
  auto vector_of = [&](int k) {
    return static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
  };

  begin_dependent_kernel();
  V a[kVpt], w[kVpt] = {}, b[kVpt] = {};
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int v = vector_of(k);
    if (v >= n_vec) continue;
    const std::int64_t at = offset + static_cast<std::int64_t>(v) * kN;
    a[k] = load_vec_coherent(static_cast<const T*>(p.x) + at);
    if (weight) w[k] = load_vec(weight + v * kN);
    if (bias) b[k] = load_vec(bias + v * kN);
    if constexpr (kKind == NormKind::kFusedAddRMS) {
      // residual <- T(x + residual); the row is normalised from the stored (rounded) values. A
      // plain (coherent) load: the kernel writes the residual.
      const V r = load_vec_coherent(static_cast<const T*>(p.residual) + at);
#pragma unroll
      for (int e = 0; e < kN; ++e)
        a[k].v[e] = from_float<T>(to_float(a[k].v[e]) + to_float(r.v[e]));
    }
  }

  // RMSNorm and the fused op sum squares; LayerNorm sums the elements, then the centered squares
  // (no cancellation of E[x^2] - mean^2).
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    if (vector_of(k) >= n_vec) continue;
    if constexpr (kKind == NormKind::kFusedAddRMS)
      store_vec(static_cast<T*>(p.residual) + offset + static_cast<std::int64_t>(vector_of(k)) * kN,
                a[k]);
#pragma unroll
    for (int e = 0; e < kN; ++e) {
      const float f = to_float(a[k].v[e]);
      sum += kKind == NormKind::kLayer ? f : f * f;
    }
  }
  RowScale rs{0.0f, 0.0f};
  if constexpr (kKind == NormKind::kLayer) {
    rs.mean = block_sum(sum, storage) * inv_n;
    float centered = 0.0f;
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      if (vector_of(k) >= n_vec) continue;
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float d = to_float(a[k].v[e]) - rs.mean;
        centered += d * d;
      }
    }
    rs.scale = rsqrtf(block_sum(centered, storage) * inv_n + p.eps);
  } else {
    rs.scale = rsqrtf(block_sum(sum, storage) * inv_n + p.eps);
  }

  T* out = static_cast<T*>(p.out) + offset;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int v = vector_of(k);
    if (v >= n_vec) continue;
    store_vec_streaming(out + static_cast<std::int64_t>(v) * kN,
                        normalized(a[k], w[k], b[k], weight != nullptr, bias != nullptr, rs));
  }
}

}  // namespace tileops::kernels::cuda
