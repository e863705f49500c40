// The norm family's fixed-length kernel: RMSNorm and LayerNorm rows of the 16-bit lengths models
// use most (4096, 8192, 16384 elements), a block per row, the row in registers, its length and the
// block's shape fixed at compile time. The fixed path of norm_kernels.hpp. Framework-free, like
// norm.cuh.
//
// Note [Fixed rows]
// norm_rows_kernel reads the row's length at run time: every access is checked against it, the
// offsets are 64-bit, and the block may walk rows, so the loads of a row issue with the index
// arithmetic and predicates between them, and `__launch_bounds__(1024)` caps every thread count at
// 64 registers. With the length, the threads and the vectors a thread holds fixed at compile time,
// the loads issue back to back, the offsets within a row are 32-bit, and each shape takes the
// registers it needs (kMinBlocks caps them where more blocks per SM won). Whether the weight and
// the bias are given is fixed at compile time too, one kernel per combination: read behind a
// run-time test of their pointers, they cost 3-7 points (RMSNorm 2048 x 8192 85.6 -> 81.9%,
// LayerNorm 2048 x 16384 88.9 -> 81.9%: the branches lengthen the stores' chain, and LayerNorm's
// capped kernels spill). Measured on the H200
// (bench/experiments/norm_ring.cu, bench/results/2026-12-03-h200-norm-fixed-rows.md; bfloat16,
// dependent launches replayed from graphs, % of 4.25 TB/s), the library's kernel -> this one:
//
//   rows x length      RMSNorm           LayerNorm (the better of registers and staged)
//   2048 x 4096        71.0 -> 80.1%     66.9 -> 77.8%
//   2048 x 8192        81.6 -> 85.9%     76.7 -> 84.3%
//   2048 x 16384       85.3 -> 89.4%     81.7 -> 87.8%
//   16384 x 8192       94.2 -> 94.9%     91.7 -> 93.1%
//   4096 x 16384       90.4 -> 92.5%     87.2 -> 91.5%
//
// The same kernel with the length read at run time (each access checked) lost most of it: RMSNorm
// 2048 x 4096 75.9%, LayerNorm 72.3%. Capping registers further to fit more blocks spilled and
// lost (RMSNorm 2048 x 4096 at 32 registers: 72.5%).
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/reduce.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/norm/cuda/norm.cuh"         // NormKind, NormParams, RowScale, normalized
#include "kernels/norm/cuda/norm_launch.hpp"  // NormFixedKernel

namespace tileops::kernels::cuda {

// A row of kVpt * kThreads vectors per block; one block per row (the grid is the rows). kMinBlocks
// (0: none) is the blocks per multiprocessor the compiler must fit; kWeighted and kBiased say that
// p.weight and p.bias are set (bias: LayerNorm only).
template <NormKind kKind, class T, int kVpt, int kThreads, int kMinBlocks, bool kWeighted,
          bool kBiased>
__global__ void __launch_bounds__(kThreads, kMinBlocks > 0 ? kMinBlocks : 1)
    norm_fixed_rows_kernel(NormParams p) {
  static_assert(kKind != NormKind::kFusedAddRMS, "the fused op has no fixed-length kernel");
  static_assert(!kBiased || kKind == NormKind::kLayer, "only LayerNorm takes a bias");
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  constexpr int kRowElements = kVpt * kThreads * kN;
  constexpr float kInvN = 1.0f / static_cast<float>(kRowElements);
  __shared__ BlockSumStorage storage;
  __shared__ BlockSumStorageOf<float2> pair_storage;
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * kRowElements;
  const T* x = static_cast<const T*>(p.x) + offset;
  T* out = static_cast<T*>(p.out) + offset;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  // The row asked for before the wait (Note [Prefetch before the wait] in dependent_launch.cuh).
  if (threadIdx.x == 0) prefetch_l2(x, kRowElements * static_cast<int>(sizeof(T)));
  begin_dependent_kernel();

  V row[kVpt];
#pragma unroll
  for (int j = 0; j < kVpt; ++j)
    row[j] = load_vec_streaming(x + (static_cast<int>(threadIdx.x) + j * kThreads) * kN);

  RowScale rs;
  if constexpr (kKind == NormKind::kLayer) {
    const float2 sums = block_sum(sums_and_squares(row), pair_storage);
    const float mean = sums.x * kInvN;
    float variance = 0.0f;
    if (!variance_from_moments<T>(mean, sums.y * kInvN, &variance)) {
      // Centered, on the registers (Note [LayerNorm in one reduction] in norm.cuh).
      variance = block_sum(centered_squares(row, mean, [](int) { return true; }), storage) * kInvN;
    }
    rs = {mean, rsqrtf(variance + p.eps)};
  } else {
    rs = {0.0f, rsqrtf(block_sum(sum_of_squares(row), storage) * kInvN + p.eps)};
  }
  // Note [Packed rows] in norm.cuh.
#pragma unroll
  for (int j = 0; j < kVpt; ++j) opaque(row[j]);

#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int at = (static_cast<int>(threadIdx.x) + j * kThreads) * kN;
    V w{}, b{};
    if constexpr (kWeighted) w = load_vec(weight + at);
    if constexpr (kBiased) b = load_vec(bias + at);
    store_vec_streaming(out + at, normalized(row[j], w, b, kWeighted, kBiased, rs));
  }
}

// The kernels of one shape, one per combination of affine tensors (NormFixedKernel).
template <NormKind kKind, class T, int kVpt, int kThreads, int kMinBlocks>
NormFixedKernel norm_fixed_shape() {
  const auto of = [](auto kernel) { return reinterpret_cast<const void*>(kernel); };
  NormFixedKernel fixed;
  fixed.threads = kThreads;
  fixed.kernels[0] =
      of(&norm_fixed_rows_kernel<kKind, T, kVpt, kThreads, kMinBlocks, false, false>);
  fixed.kernels[1] = of(&norm_fixed_rows_kernel<kKind, T, kVpt, kThreads, kMinBlocks, true, false>);
  if constexpr (kKind == NormKind::kLayer) {
    fixed.kernels[2] =
        of(&norm_fixed_rows_kernel<kKind, T, kVpt, kThreads, kMinBlocks, false, true>);
    fixed.kernels[3] =
        of(&norm_fixed_rows_kernel<kKind, T, kVpt, kThreads, kMinBlocks, true, true>);
  }
  return fixed;
}

// The kernels of one op for rows of `n` elements of the 16-bit type T, or none (norm_fixed_row in
// norm_launch.hpp says which lengths have them). The shapes are the H200's best (Note [Fixed
// rows]): RMSNorm 2, 2 and 4 vectors a thread at 4096, 8192, 16384; LayerNorm 4, with registers
// capped for 4 and 2 blocks per multiprocessor at 8192 and 16384.
template <NormKind kKind, class T>
NormFixedKernel norm_fixed_kernel(std::int64_t n) {
  if constexpr (kKind == NormKind::kRMS) {
    if (n == 4096) return norm_fixed_shape<kKind, T, 2, 256, 0>();
    if (n == 8192) return norm_fixed_shape<kKind, T, 2, 512, 0>();
    if (n == 16384) return norm_fixed_shape<kKind, T, 4, 512, 0>();
  } else if constexpr (kKind == NormKind::kLayer) {
    if (n == 4096) return norm_fixed_shape<kKind, T, 4, 128, 0>();
    if (n == 8192) return norm_fixed_shape<kKind, T, 4, 256, 4>();
    if (n == 16384) return norm_fixed_shape<kKind, T, 4, 512, 2>();
  }
  return {};
}

}  // namespace tileops::kernels::cuda
