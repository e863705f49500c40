// The norm family's kernel for calls of fewer rows than multiprocessors (decode; Note [Few rows]
// in norm.cuh): each row split over a cluster of blocks, one vector per thread in registers, the
// blocks' partial sums exchanged through distributed shared memory.
// Framework-free, like norm.cuh.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/norm/cuda/norm.cuh"  // NormKind, NormParams, normalized

namespace tileops::kernels::cuda {

// The most blocks a row is split over: the portable cluster size.
inline constexpr int kNormMaxClusterBlocks = 8;

// The sum of `value` over the blocks of the cluster, in every thread: each block writes its value
// into its slot of every block's `slots`, one cluster barrier (release / acquire), then each block
// adds its own slots. No block reads another's memory, so none has to wait before it exits.
template <int kCluster, class V>
__device__ __forceinline__ V cluster_sum(V value, V* slots) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x < kCluster)
    *cluster.map_shared_rank(&slots[cluster.block_rank()], threadIdx.x) = value;
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
  V total{};
#pragma unroll
  for (int r = 0; r < kCluster; ++r) total = sum_of(total, slots[r]);
  return total;
}

// A row per cluster of kCluster blocks (1 to kNormMaxClusterBlocks, the launch's cluster size; the
// grid is rows * kCluster blocks): block r holds the row's vectors [r * S, (r + 1) * S), S =
// ceil(vectors / kCluster), one per thread (blockDim.x >= S). The cluster size is a template
// parameter: with it read at run time (%cluster_nctarank) the same kernel measured 0.2-0.3 us
// slower in clusters of 2 to 8 (bench/results/2026-12-02-h200-decode-prefetch.md). Before the
// dependent wait, thread 0 prefetches the block's part of every operand into L2 (Note [Prefetch
// before the wait] in dependent_launch.cuh) and a cluster's blocks announce that they run (the
// arrive that the wait before the first remote write completes: a block's shared memory may be
// written only once it runs).
template <NormKind kKind, class T, int kCluster>
__global__ void __launch_bounds__(1024) norm_few_rows_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  __shared__ float slots[2][kCluster];
  __shared__ float2 pair_slots[kCluster];
  const int rank =
      kCluster > 1 ? static_cast<int>(cooperative_groups::this_cluster().block_rank()) : 0;
  const int n_vec = static_cast<int>(p.n / kN);
  const int slice = (n_vec + kCluster - 1) / kCluster;
  const int first = rank * slice;
  const int count = n_vec - first < slice ? (n_vec > first ? n_vec - first : 0) : slice;
  const bool holds = static_cast<int>(threadIdx.x) < count;
  const int v = first + static_cast<int>(threadIdx.x);
  const std::int64_t row = blockIdx.x / kCluster;
  const std::int64_t at = row * p.n + static_cast<std::int64_t>(v) * kN;
  const T* x = static_cast<const T*>(p.x);
  T* residual = static_cast<T*>(p.residual);
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = kKind == NormKind::kLayer ? static_cast<const T*>(p.bias) : nullptr;
  const float inv_n = 1.0f / static_cast<float>(p.n);

  if (threadIdx.x == 0 && count > 0) {
    const auto bytes = static_cast<std::uint32_t>(count * 16);
    const std::int64_t start = row * p.n + static_cast<std::int64_t>(first) * kN;
    if (weight) prefetch_l2(weight + first * kN, bytes);
    if (bias) prefetch_l2(bias + first * kN, bytes);
    prefetch_l2(x + start, bytes);
    if (kKind == NormKind::kFusedAddRMS) prefetch_l2(residual + start, bytes);
  }
  if (kCluster > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  begin_dependent_kernel();

  V a = zero_vec<T>(), r = zero_vec<T>(), w{}, b{};
  if (holds) {
    a = load_vec_coherent(x + at);
    // A plain (coherent) load: the kernel writes the residual.
    if constexpr (kKind == NormKind::kFusedAddRMS) r = load_vec_coherent(residual + at);
    if (weight) w = load_vec(weight + v * kN);
    if (bias) b = load_vec(bias + v * kN);
  }
  // FusedAddRMSNorm: residual <- T(x + residual), the row normalised from the rounded values. The
  // store waits until after the cluster's exchanges: their release (a GPU-scope fence in SASS)
  // would otherwise wait for it to reach memory.
  if constexpr (kKind == NormKind::kFusedAddRMS) {
#pragma unroll
    for (int e = 0; e < kN; ++e) a.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
  }

  // RMSNorm and the fused op sum squares; LayerNorm sums the elements and their squares (Note
  // [LayerNorm in one reduction]). Elements past the row are zeros and add nothing.
  RowScale rs{0.0f, 0.0f};
  if constexpr (kKind == NormKind::kLayer) {
    float2 sums{0.0f, 0.0f};
#pragma unroll
    for (int e = 0; e < kN; ++e) {
      const float f = to_float(a.v[e]);
      sums.x += f;
      sums.y += f * f;
    }
    sums = block_sum(sums, pair_storage);
    if constexpr (kCluster > 1) {
      asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
      sums = cluster_sum<kCluster>(sums, pair_slots);
    }
    rs.mean = sums.x * inv_n;
    float variance = 0.0f;
    if (!variance_from_moments<T>(rs.mean, sums.y * inv_n, &variance)) {
      float centered = 0.0f;
      if (holds) {
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          const float d = to_float(a.v[e]) - rs.mean;
          centered += d * d;
        }
      }
      centered = block_sum(centered, storage);
      if constexpr (kCluster > 1) centered = cluster_sum<kCluster>(centered, slots[1]);
      variance = centered * inv_n;
    }
    rs.scale = rsqrtf(variance + p.eps);
  } else {
    float sum = 0.0f;
#pragma unroll
    for (int e = 0; e < kN; ++e) {
      const float f = to_float(a.v[e]);
      sum += f * f;
    }
    float total = block_sum(sum, storage);
    if constexpr (kCluster > 1) {
      asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
      total = cluster_sum<kCluster>(total, slots[0]);
    }
    rs.scale = rsqrtf(total * inv_n + p.eps);
  }
  if (holds) {
    if constexpr (kKind == NormKind::kFusedAddRMS) store_vec(residual + at, a);
    store_vec_streaming(static_cast<T*>(p.out) + at,
                        normalized(a, w, b, weight != nullptr, bias != nullptr, rs));
  }
}

}  // namespace tileops::kernels::cuda
