// softmax and log_softmax with the row staged in shared memory (Note [Staged rows] in
// kernels/common/cuda/staged_rows.cuh): a block per row, the row copied in by the copy engine,
// then the maximum, the sum of exponentials and the writes each read it there. The register
// path's kernel for rows of 16 KB and more, and for calls of fewer rows than multiprocessors
// (Note [Softmax kernels] in softmax.cuh). 16-byte aligned rows only. Framework-free.
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/staged_rows.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/reduction/cuda/softmax.cuh"

namespace tileops::kernels::cuda::reduction {

// One row per block: the plan stages only calls whose rows the grid covers.
template <bool kLog, class T>
__global__ void __launch_bounds__(1024) softmax_staged_kernel(SoftmaxParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  extern __shared__ __align__(128) unsigned char staged[];
  __shared__ StageBarrier loaded;
  __shared__ BlockScratch<float> scratch;
  const V* row = reinterpret_cast<const V*>(staged);
  const int vectors = static_cast<int>(p.length / kN);
  const auto row_bytes = static_cast<unsigned>(p.length * static_cast<std::int64_t>(sizeof(T)));
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * p.length;
  const int first = static_cast<int>(threadIdx.x);
  const int step = static_cast<int>(blockDim.x);

  // The row asked for before the wait (Note [Prefetch before the wait] in dependent_launch.cuh).
  if (threadIdx.x == 0 && row_bytes > 0)
    prefetch_l2(static_cast<const T*>(p.x) + offset, row_bytes);
  begin_dependent_kernel();
  if (threadIdx.x == 0) {
    stage_barrier_init(loaded);
    stage_barrier_expect(loaded, row_bytes);
    stage_copy(staged, static_cast<const T*>(p.x) + offset, row_bytes, loaded,
               /*evict_first=*/true);
  }
  __syncthreads();  // the barrier is initialised
  stage_barrier_wait(loaded, 0);

  float max = -INFINITY;
#pragma unroll 4
  for (int v = first; v < vectors; v += step) {
    const V a = row[v];
#pragma unroll
    for (int e = 0; e < kN; ++e) max = MaxMonoid<float>::combine(max, to_float(a.v[e]));
  }
  max = block_all<MaxMonoid<float>>(max, scratch);
  float sum = 0.0f;
#pragma unroll 4
  for (int v = first; v < vectors; v += step) {
    const V a = row[v];
#pragma unroll
    for (int e = 0; e < kN; ++e) sum += fast_exp(to_float(a.v[e]) - max);
  }
  const Normalizer<kLog, true> normalize(MaxExpSum{max, block_all<SumMonoid>(sum, scratch)});
  T* out = static_cast<T*>(p.out) + offset;
#pragma unroll 4
  for (int v = first; v < vectors; v += step) {
    const V a = row[v];
    V y;
#pragma unroll
    for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(a.v[e])));
    store_vec_streaming(out + static_cast<std::int64_t>(v) * kN, y);
  }
}

}  // namespace tileops::kernels::cuda::reduction
