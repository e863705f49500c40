// The ALiBi bias kernel template (manifest/attention.yaml): out[h, i, j] = slope[h] * (j - i),
// out [H, S, S] contiguous, written only. Framework-free: plain pointers and sizes;
// alibi_launch.cu instantiates and launches it.
//
// Note [ALiBi kernel]
// Threads are columns (x) by rows (y) of the [H S, S] matrix of rows; a block walks its rows in a
// grid-stride loop over a grid of the blocks the device holds at once (an occupancy query when
// the entry is built), so no block waits for a second wave. x covers a row four vectors (or
// elements) to a thread (kColumnsPerThread in alibi_launch.cu): with one vector a thread in each
// row, the rows of 2048 columns reached only 71-72% of the H200's 4.25 TB/s where rows of 4096 (two
// a thread) reached 99%; with four both reach 99-104%
// (bench/results/2026-12-04-h200-alibi-columns-per-thread.md). A thread divides once, for its first
// row's (h, i), and then advances them by the grid's step; the columns need no division. The
// slope is recomputed only when a thread's head changes (consecutive rows of a thread mostly share
// one), in double as the CPU kernel computes it, so that both round the same exact value to
// float32 once.
//
// The vector path writes each row as: the elements before the row's first 16-byte boundary, then
// 16-byte vectors (streaming stores: the bias is written once and read by another kernel), then
// the tail. Rows of any length take it, odd S included: with S not a multiple of a vector, every
// row starts at another offset in its vector and the head and tail absorb it. The general path
// writes element by element (a misaligned out). The product slope * (j - i) is formed in float32
// ((j - i) is exact below 2^24) and rounded to T once. Offsets are 64-bit: H S S may exceed 2^31.
#pragma once

#include <cstdint>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

struct AlibiParams {
  void* out = nullptr;
  std::int64_t heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t pow2_heads = 0;  // m: the largest power of two <= heads
};

// The manifest's slope of head h, with m the largest power of two <= H: the power of two in
// double (exact exponent: m is a power of two), rounded to float32 once.
__device__ __forceinline__ float alibi_slope(std::int64_t h, std::int64_t m) {
  const auto hd = static_cast<double>(h);
  const auto md = static_cast<double>(m);
  const double exponent = h < m ? -8.0 * (hd + 1.0) / md : -4.0 * (2.0 * (hd - md) + 1.0) / md;
  return static_cast<float>(exp2(exponent));
}

template <class T, bool kVector>
__global__ void alibi_kernel(AlibiParams p) {
  constexpr int kV = Vec<T>::kSize;
  T* out = static_cast<T*>(p.out);
  const std::int64_t s = p.seq_len;
  const std::int64_t rows = p.heads * s;
  const std::int64_t row_step = static_cast<std::int64_t>(gridDim.x) * blockDim.y;
  // (h, i) of the thread's row, advanced by the step's (h, i) instead of a division per row.
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  std::int64_t h = first / s, i = first % s;
  const std::int64_t h_step = row_step / s, i_step = row_step % s;
  std::int64_t head = -1;
  float slope = 0.0f;
  begin_dependent_kernel();
  for (std::int64_t row = first; row < rows; row += row_step) {
    if (h != head) {
      head = h;
      slope = alibi_slope(h, p.pow2_heads);
    }
    T* out_row = out + row * s;
    std::int64_t lead = s;  // elements written one by one before the vectors
    std::int64_t vectors = 0;
    if constexpr (kVector) {
      const auto misalignment =
          static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(out_row) % 16);
      lead = misalignment == 0 ? 0 : (16 - misalignment) / static_cast<std::int64_t>(sizeof(T));
      lead = lead < s ? lead : s;
      vectors = (s - lead) / kV;
    }
    for (std::int64_t j = threadIdx.x; j < lead; j += blockDim.x)
      out_row[j] = from_float<T>(slope * static_cast<float>(j - i));
    if constexpr (kVector) {
      for (std::int64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
        const std::int64_t j0 = lead + v * kV;
        const float base = static_cast<float>(j0 - i);
        Vec<T> values;
#pragma unroll
        for (int e = 0; e < kV; ++e)
          values.v[e] = from_float<T>(slope * (base + static_cast<float>(e)));
        store_vec_streaming(out_row + j0, values);
      }
      for (std::int64_t j = lead + vectors * kV + threadIdx.x; j < s; j += blockDim.x)
        out_row[j] = from_float<T>(slope * static_cast<float>(j - i));
    }
    h += h_step;
    i += i_step;
    if (i >= s) {
      i -= s;
      ++h;
    }
  }
}

}  // namespace tileops::kernels::cuda
