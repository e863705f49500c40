// Binary elementwise kernel templates (manifest/elementwise.yaml): out = a + alpha * b and
// out = a * b, float types in float32 rounded once to T, integer types wrapping. Framework-free:
// plain pointers, sizes and the BinaryLayout; binary_add.cu and binary_mul.cu instantiate them.
//
// Note [Binary kernels]
// Three kernels, each over a grid of one block per chunk of the work (a loop over chunks only
// when the chunks outnumber a grid's 2^31 - 1 blocks). Measured on the H200
// (bench/experiments/binary_variants.cu, bfloat16 [16384, 8192]): a persistent grid sized to the
// device with a grid-stride loop reached 95% of the 4.25 TB/s copy ceiling on the same-shape add
// and torch's one-block-per-chunk kernel 100.3%; the same add chunked reached 101.6% (1 vector
// per thread; 101.0% with 4), and the [8192] bias 97.8% (94.5% with 4 vectors per thread, 92.7%
// with streaming hints). So the kernels are chunked, kBinaryUnroll is 1, and loads and stores
// carry no cache hint. The rows kernel keeps 4 vectors per lane (kBinaryRowsUnroll): its tiles
// cost divisions and offsets that one vector does not amortise (its bias took 76% of the ceiling
// at 1 and 84.6% at 4 with the persistent grid):
//   vector   same shapes, contiguous, 16-byte aligned: the tensors as one run of 16-byte vectors,
//            a block per kBinaryThreads * kBinaryUnroll vectors.
//   rows     the layout's rows (Note [Binary layout] in binary_layout.hpp) in 16-byte vectors:
//            broadcasts and views whose rows are unit-stride and 16-byte aligned. A tile is
//            kBinaryRowsUnroll vectors per lane of a group of lanes that shares a row; a tile costs
//            one division, and the row's input offsets one more per outer axis beyond the first
//            (none for [M, N] + [N]), never any per element; an input broadcast along the
//            row is one scalar per row.
//   general  the rows kernel one element at a time with any step: strided views, misaligned
//            pointers, odd row lengths.
//   repeated row  the rows path's [M, N] + [N] and [N] + [M, N] (one input contiguous, the other
//            one row read by every row): the vector kernel's cut, one vector per thread over the
//            output as one run, each vector's column found from the block's first with one
//            division per block. The rows kernel's tiles took 72 registers (3 blocks per SM) and
//            72.3-73.7% of the ceiling on [2048, 4096] + [4096]; this kernel, 31 registers,
//            80.3-82.0%, above a copy of those bytes. Two vectors per thread
//            (kRepeatedRowUnroll) gained 1.5 points on the add and lost 1 on the mul there
//            (bench/results/2026-12-04-h200-binary-broadcast-kernels.md).
//   row scalar  the rows path's layouts where one input is laid out like the output and the
//            other is one value per row (broadcast along the row: [M, N] + [M, 1], the 4-D
//            channel [B, C, H, W] + [C, 1, 1]): the same cut, each vector's row and the value's
//            offset found by 32-bit divisions per thread where the sizes allow: the channel
//            broadcast [16, 256, 56, 56] + [256, 1, 1] went from 71-72% to 81-83% of the ceiling.
// The rows path's launch picks among the rows kernel, the repeated row and the row scalar from the
// layout (rows_kernel in binary_layout.hpp, pinned by tests/ops/test_binary_layout.cpp). Offsets
// are 64-bit throughout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/packed.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/elementwise/binary_layout.hpp"

namespace tileops::kernels::cuda {

enum class BinaryKind { kAdd, kMul };

inline constexpr int kBinaryThreads = 256;
inline constexpr int kBinaryUnroll = 1;      // Note [Binary kernels]
inline constexpr int kBinaryRowsUnroll = 4;  // the rows and general kernels
inline constexpr int kRepeatedRowUnroll = 1;
// Resident blocks per SM the registers are capped for: 1024 threads of the vector kernel, 768 of
// the rows kernels (which keep more offsets live), and no spills (ptxas -v, CUDA 13).
inline constexpr int kBinaryMinBlocks = 4;
inline constexpr int kBinaryRowsMinBlocks = 3;

struct BinaryParams {
  void* out = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  std::int64_t numel = 0;
  float alpha = 1.0f;          // float types
  std::int64_t alpha_int = 1;  // integer types
  // The rows and general kernels: the layout and its tiling. A group of 2^lane_shift lanes shares
  // a row; a tile is one chunk (2^lane_shift * kBinaryRowsUnroll packs) of the rows of one block's
  // groups.
  BinaryLayout layout;
  int lane_shift = 0;
  std::int64_t chunks_per_row = 1;
  std::int64_t tiles = 0;
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

// A 16-byte vector of T, as four raw words (packed.cuh says why).
template <BinaryKind kKind, class T>
__device__ __forceinline__ uint4 apply_packed(uint4 x, uint4 y, const BinaryParams& p) {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    auto word = [&](std::uint32_t a, std::uint32_t b) {
      return static_cast<std::uint32_t>(
          apply<kKind>(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), p));
    };
    return make_uint4(word(x.x, y.x), word(x.y, y.y), word(x.z, y.z), word(x.w, y.w));
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    auto pair = [&](std::uint32_t a_lo, std::uint32_t a_hi, std::uint32_t b_lo,
                    std::uint32_t b_hi) {
      const auto a = static_cast<std::int64_t>(std::uint64_t{a_hi} << 32 | a_lo);
      const auto b = static_cast<std::int64_t>(std::uint64_t{b_hi} << 32 | b_lo);
      return static_cast<std::uint64_t>(apply<kKind>(a, b, p));
    };
    const std::uint64_t lo = pair(x.x, x.y, y.x, y.y), hi = pair(x.z, x.w, y.z, y.w);
    return make_uint4(static_cast<std::uint32_t>(lo), static_cast<std::uint32_t>(lo >> 32),
                      static_cast<std::uint32_t>(hi), static_cast<std::uint32_t>(hi >> 32));
  } else if constexpr (kKind == BinaryKind::kAdd) {
    const float alpha = p.alpha;
    return map_packed<T>(x, y, [alpha](float a, float b) { return a + alpha * b; });
  } else {
    return map_packed<T>(x, y, [](float a, float b) { return a * b; });
  }
}

template <BinaryKind kKind, class T>
__global__ void __launch_bounds__(kBinaryThreads, kBinaryMinBlocks)
    binary_vector_kernel(BinaryParams p) {
  constexpr int kN = Vec<T>::kSize;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  constexpr std::int64_t kChunk = std::int64_t{kBinaryThreads} * kBinaryUnroll;
  // The block's first chunk, asked for while the previous kernel runs (Note [Prefetch before the
  // wait] in dependent_launch.cuh).
  if (threadIdx.x == 0) {
    prefetch_vectors_l2(a, blockIdx.x * kChunk, kChunk, vectors);
    prefetch_vectors_l2(b, blockIdx.x * kChunk, kChunk, vectors);
  }
  begin_dependent_kernel();
  for (std::int64_t chunk = blockIdx.x; chunk * kChunk < vectors; chunk += gridDim.x) {
    const std::int64_t base = chunk * kChunk + threadIdx.x;
    uint4 x[kBinaryUnroll], y[kBinaryUnroll];
#pragma unroll
    for (int u = 0; u < kBinaryUnroll; ++u) {
      const std::int64_t i = base + u * kBinaryThreads;
      if (i < vectors) {
        x[u] = load_packed(a + i * kN);
        y[u] = load_packed(b + i * kN);
      }
    }
#pragma unroll
    for (int u = 0; u < kBinaryUnroll; ++u) {
      const std::int64_t i = base + u * kBinaryThreads;
      if (i < vectors) store_packed(out + i * kN, apply_packed<kKind, T>(x[u], y[u], p));
    }
  }
  // The elements past the last whole vector (fewer than one vector's worth): the first block's.
  if (blockIdx.x == 0)
    for (std::int64_t i = vectors * kN + threadIdx.x; i < p.numel; i += blockDim.x)
      out[i] = apply<kKind>(a[i], b[i], p);
}

// The element offsets of row `row`'s first element in a and b.
__device__ __forceinline__ void row_offsets(const BinaryLayout& l, std::int64_t row,
                                            std::int64_t& a_offset, std::int64_t& b_offset) {
  a_offset = 0;
  b_offset = 0;
  for (int k = l.outer_rank - 1; k >= 0; --k) {
    std::int64_t index = row;
    if (k > 0) {
      row = index / l.outer_shape[k];
      index -= row * l.outer_shape[k];
    }
    a_offset += index * l.a_outer[k];
    b_offset += index * l.b_outer[k];
  }
}

// A row's vector `i` of an input with step 0 (one element, splatted) or 1.
template <class T>
__device__ __forceinline__ uint4 load_row_packed(const T* row, std::int64_t step, std::int64_t i) {
  if (step == 0) return splat_packed(__ldg(row));
  return load_packed(row + i * Vec<T>::kSize);
}

// kVector: the rows kernel (packs are 16-byte vectors, steps 0 or 1); else the general kernel
// (packs are elements, any step).
template <BinaryKind kKind, class T, bool kVector>
__global__ void __launch_bounds__(kBinaryThreads, kBinaryRowsMinBlocks)
    binary_rows_kernel(BinaryParams p) {
  constexpr int kPack = kVector ? Vec<T>::kSize : 1;
  using Pack = std::conditional_t<kVector, uint4, T>;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  const BinaryLayout& l = p.layout;
  const int lanes = 1 << p.lane_shift;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int group = static_cast<int>(threadIdx.x) >> p.lane_shift;
  const int groups = kBinaryThreads >> p.lane_shift;
  const std::int64_t packs = l.cols / kPack;
  begin_dependent_kernel();
  for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    const std::int64_t row_block = tile / p.chunks_per_row;
    const std::int64_t chunk = tile - row_block * p.chunks_per_row;
    const std::int64_t row = row_block * groups + group;
    if (row >= l.rows) continue;
    std::int64_t a_offset = 0, b_offset = 0;
    row_offsets(l, row, a_offset, b_offset);
    const T* a_row = a + a_offset;
    const T* b_row = b + b_offset;
    T* out_row = out + row * l.cols;
    const std::int64_t first = chunk * (std::int64_t{lanes} * kBinaryRowsUnroll) + lane;
    Pack x[kBinaryRowsUnroll], y[kBinaryRowsUnroll];
#pragma unroll
    for (int u = 0; u < kBinaryRowsUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < packs) {
        if constexpr (kVector) {
          x[u] = load_row_packed(a_row, l.a_step, i);
          y[u] = load_row_packed(b_row, l.b_step, i);
        } else {
          x[u] = a_row[i * l.a_step];
          y[u] = b_row[i * l.b_step];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kBinaryRowsUnroll; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < packs) {
        if constexpr (kVector)
          store_packed(out_row + i * kPack, apply_packed<kKind, T>(x[u], y[u], p));
        else
          out_row[i] = apply<kKind>(x[u], y[u], p);
      }
    }
  }
}

// Note [Binary kernels]'s repeated row: out (contiguous, M rows of `row_vectors` vectors) = f(a, b)
// where the contiguous input runs like out and the row input is one row of `row_vectors` vectors
// (kRowIsB: b is the row, else a).
template <BinaryKind kKind, class T, bool kRowIsB>
__global__ void __launch_bounds__(kBinaryThreads, kBinaryMinBlocks)
    binary_repeated_row_kernel(BinaryParams p) {
  constexpr int kN = Vec<T>::kSize;
  const T* full = static_cast<const T*>(kRowIsB ? p.a : p.b);
  const uint4* row = static_cast<const uint4*>(kRowIsB ? p.b : p.a);
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  const std::int64_t row_vectors = p.layout.cols / kN;
  constexpr std::int64_t kChunk = std::int64_t{kBinaryThreads} * kRepeatedRowUnroll;
  // The contiguous input's chunk, asked for while the previous kernel runs (Note [Prefetch before
  // the wait] in dependent_launch.cuh); the row is shared by every block and read through L1.
  if (threadIdx.x == 0) prefetch_vectors_l2(full, blockIdx.x * kChunk, kChunk, vectors);
  begin_dependent_kernel();
  for (std::int64_t chunk = blockIdx.x; chunk * kChunk < vectors; chunk += gridDim.x) {
    const std::int64_t first = chunk * kChunk;
    // The column of the block's first vector by one division, 32-bit where the run allows (a
    // 64-bit one costs several times the instructions); a vector's column from it, with another
    // division only where a row is shorter than the chunk.
    const std::int64_t first_column =
        vectors <= 0xffffffffLL ? static_cast<std::int64_t>(static_cast<std::uint32_t>(first) %
                                                            static_cast<std::uint32_t>(row_vectors))
                                : first % row_vectors;
    uint4 x[kRepeatedRowUnroll], y[kRepeatedRowUnroll];
#pragma unroll
    for (int u = 0; u < kRepeatedRowUnroll; ++u) {
      const std::int64_t offset = threadIdx.x + std::int64_t{u} * kBinaryThreads;
      if (first + offset >= vectors) continue;
      std::int64_t column = first_column + offset;
      if (column >= row_vectors) column -= row_vectors;
      if (column >= row_vectors) column %= row_vectors;
      x[u] = load_packed(full + (first + offset) * kN);
      y[u] = __ldg(row + column);
    }
#pragma unroll
    for (int u = 0; u < kRepeatedRowUnroll; ++u) {
      const std::int64_t i = first + threadIdx.x + std::int64_t{u} * kBinaryThreads;
      if (i < vectors)
        store_packed(out + i * kN, kRowIsB ? apply_packed<kKind, T>(x[u], y[u], p)
                                           : apply_packed<kKind, T>(y[u], x[u], p));
    }
  }
}

// The element offset of row `row`'s first element in the input of outer strides `strides`, in
// 32-bit arithmetic (every outer extent and the row below 2^32; the strides and offset 64-bit).
__device__ __forceinline__ std::int64_t row_offset_32(const BinaryLayout& l,
                                                      const std::int64_t* strides,
                                                      std::uint32_t row) {
  std::int64_t offset = 0;
  for (int k = l.outer_rank - 1; k >= 0; --k) {
    std::uint32_t index = row;
    if (k > 0) {
      const auto extent = static_cast<std::uint32_t>(l.outer_shape[k]);
      row = index / extent;
      index -= row * extent;
    }
    offset += static_cast<std::int64_t>(index) * strides[k];
  }
  return offset;
}

// Note [Binary kernels]'s row scalar: out (contiguous, rows of `row_vectors` vectors) = f(a, b)
// where the full input is laid out like out and the scalar input holds one value per row at its
// outer strides (kScalarIsB: b is the scalar input, else a).
template <BinaryKind kKind, class T, bool kScalarIsB>
__global__ void __launch_bounds__(kBinaryThreads, kBinaryMinBlocks)
    binary_row_scalar_kernel(BinaryParams p) {
  constexpr int kN = Vec<T>::kSize;
  const BinaryLayout& l = p.layout;
  const T* full = static_cast<const T*>(kScalarIsB ? p.a : p.b);
  const T* scalars = static_cast<const T*>(kScalarIsB ? p.b : p.a);
  const std::int64_t* strides = kScalarIsB ? l.b_outer : l.a_outer;
  T* out = static_cast<T*>(p.out);
  const std::int64_t vectors = p.numel / kN;
  const std::int64_t row_vectors = l.cols / kN;
  constexpr std::int64_t kChunk = kBinaryThreads;
  if (threadIdx.x == 0) prefetch_vectors_l2(full, blockIdx.x * kChunk, kChunk, vectors);
  begin_dependent_kernel();
  // 32-bit divisions where the run allows: a 64-bit one costs several times the instructions.
  const bool narrow = vectors <= 0xffffffffLL;
  for (std::int64_t chunk = blockIdx.x; chunk * kChunk < vectors; chunk += gridDim.x) {
    const std::int64_t i = chunk * kChunk + threadIdx.x;
    if (i >= vectors) continue;
    const uint4 x = load_packed(full + i * kN);
    std::int64_t offset = 0;
    if (narrow) {
      offset = row_offset_32(
          l, strides, static_cast<std::uint32_t>(i) / static_cast<std::uint32_t>(row_vectors));
    } else {
      std::int64_t a_offset = 0, b_offset = 0;
      row_offsets(l, i / row_vectors, a_offset, b_offset);
      offset = kScalarIsB ? b_offset : a_offset;
    }
    const uint4 y = splat_packed(__ldg(scalars + offset));
    store_packed(out + i * kN,
                 kScalarIsB ? apply_packed<kKind, T>(x, y, p) : apply_packed<kKind, T>(y, x, p));
  }
}

}  // namespace tileops::kernels::cuda
