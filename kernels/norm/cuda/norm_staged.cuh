// The norm family's staged kernel: a block per row, the row copied into shared memory by the copy
// engine (Note [Staged rows] in kernels/common/cuda/staged_rows.cuh), then read there by each pass.
// The shared path of LayerNorm and FusedAddRMSNorm.
// Framework-free, like norm.cuh.
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/staged_rows.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/norm/cuda/norm.cuh"  // NormKind, NormParams

namespace tileops::kernels::cuda {

// Each thread walks the vectors threadIdx.x + k * blockDim.x of a row.
template <class F>
__device__ __forceinline__ void for_each_row_vector(int vectors, F&& f) {
#pragma unroll 4
  for (int v = static_cast<int>(threadIdx.x); v < vectors; v += static_cast<int>(blockDim.x)) f(v);
}

// Shared memory holds the staged rows of T: x and the residual (fused op); launch_norm sizes it so
// (staged_rows in norm_launch.cu). The weight and bias are read through L1, where the other blocks
// of the multiprocessor left them. One row per block:
// the grid covers the rows (a staged row is at least 2 KB, so 2^31 - 1 blocks cover more rows than
// a device holds; launch_norm refuses more).
template <NormKind kKind, class T>
__global__ void __launch_bounds__(1024) norm_staged_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  extern __shared__ __align__(128) unsigned char staged[];
  __shared__ StageBarrier loaded;
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const int n_vec = static_cast<int>(p.n / kN);
  const auto row_bytes = static_cast<unsigned>(p.n * static_cast<std::int64_t>(sizeof(T)));
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = kKind == NormKind::kLayer ? static_cast<const T*>(p.bias) : nullptr;
  V* row_x = reinterpret_cast<V*>(staged);
  V* row_residual = row_x + n_vec;  // the fused op only
  const float inv_n = 1.0f / static_cast<float>(p.n);
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * p.n;
  if (row_bytes == 0) return;

  // The row asked for before the wait (Note [Prefetch before the wait] in dependent_launch.cuh).
  if (threadIdx.x == 0) {
    prefetch_l2(static_cast<const T*>(p.x) + offset, row_bytes);
    if constexpr (kKind == NormKind::kFusedAddRMS)
      prefetch_l2(static_cast<const T*>(p.residual) + offset, row_bytes);
  }
  begin_dependent_kernel();
  if (threadIdx.x == 0) {
    stage_barrier_init(loaded);
    stage_barrier_expect(loaded, row_bytes * (kKind == NormKind::kFusedAddRMS ? 2u : 1u));
    stage_copy(row_x, static_cast<const T*>(p.x) + offset, row_bytes, loaded,
               /*evict_first=*/true);
    if constexpr (kKind == NormKind::kFusedAddRMS)
      stage_copy(row_residual, static_cast<const T*>(p.residual) + offset, row_bytes, loaded);
  }
  __syncthreads();  // the barrier is initialised
  stage_barrier_wait(loaded, 0);

  RowScale rs;
  if constexpr (kKind == NormKind::kLayer) {
    float2 sums{0.0f, 0.0f};
    for_each_row_vector(n_vec, [&](int v) {
      const V a = row_x[v];
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float f = to_float(a.v[e]);
        sums.x += f;
        sums.y += f * f;
      }
    });
    sums = block_sum(sums, pair_storage);
    const float mean = sums.x * inv_n;
    float variance = 0.0f;
    if (!variance_from_moments<T>(mean, sums.y * inv_n, &variance)) {
      // Centered, from shared memory (Note [LayerNorm in one reduction]).
      float centered = 0.0f;
      for_each_row_vector(n_vec, [&](int v) {
        const V a = row_x[v];
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          const float d = to_float(a.v[e]) - mean;
          centered += d * d;
        }
      });
      variance = block_sum(centered, storage) * inv_n;
    }
    rs = {mean, rsqrtf(variance + p.eps)};
  } else {
    float squares = 0.0f;
    T* residual = static_cast<T*>(p.residual) + offset;
    for_each_row_vector(n_vec, [&](int v) {
      V a = row_x[v];
      if constexpr (kKind == NormKind::kFusedAddRMS) {
        // residual <- T(x + residual); the row is normalised from the stored (rounded) values,
        // which this thread keeps in its own slots of the staged row for the last pass.
        const V r = row_residual[v];
#pragma unroll
        for (int e = 0; e < kN; ++e) a.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
        store_vec(residual + static_cast<std::int64_t>(v) * kN, a);
        row_x[v] = a;
      }
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float f = to_float(a.v[e]);
        squares += f * f;
      }
    });
    rs = {0.0f, rsqrtf(block_sum(squares, storage) * inv_n + p.eps)};
  }

  T* out = static_cast<T*>(p.out) + offset;
  for_each_row_vector(n_vec, [&](int v) {
    const V a = row_x[v];
    V w{}, b{};
    if (weight) w = load_vec(weight + v * kN);
    if (bias) b = load_vec(bias + v * kN);
    store_vec_streaming(out + static_cast<std::int64_t>(v) * kN,
                        normalized(a, w, b, weight != nullptr, bias != nullptr, rs));
  });
}

}  // namespace tileops::kernels::cuda
