// The layout of a binary elementwise call as its kernels walk it: the output (contiguous) seen as
// rows of an innermost axis, and each input's steps through that axis and through the rows.
// Shared by the call spec (src/ops/elementwise/binary.cpp), which keys on what the layout allows,
// and the CUDA launch, which passes it to the kernels; a plain struct so that device code can read
// it.
#pragma once

#include <cstdint>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels {

// Axes of the layout, after merging: the output's rank limit of the CUDA paths that decode rows.
inline constexpr int kMaxBinaryAxes = 8;

// Note [Binary layout]
// Axes of length 1 are dropped and adjacent axes merge wherever both inputs step through them as
// one axis (a contiguous operand, a broadcast one over both, a view whose outer stride is its inner
// stride times the inner length), so the usual patterns become few axes: same shapes one axis,
// [M, N] + [N] two axes with b's row step 0, [B, C, H, W] + [C, 1, 1] three axes [B, C, H * W]
// with b stepping only through C. The innermost merged axis is a row; a kernel finds each row's
// input offsets from the outer axes once per row, and then steps through the row with a step per
// input (1, 0 for an input broadcast along the row, or a view's stride), with no index arithmetic
// per element.
struct BinaryLayout {
  std::int64_t cols = 1;  // the row length (the innermost merged axis)
  std::int64_t rows = 1;  // the product of the outer axes
  int outer_rank = 0;     // at most kMaxBinaryAxes - 1
  std::int64_t outer_shape[kMaxBinaryAxes - 1] = {};
  // Element strides of each input: along the row, and along each outer axis (0 where it
  // broadcasts).
  std::int64_t a_step = 0;
  std::int64_t b_step = 0;
  std::int64_t a_outer[kMaxBinaryAxes - 1] = {};
  std::int64_t b_outer[kMaxBinaryAxes - 1] = {};
};

// The layout of out = f(a, b) for a and b broadcasting to `out_shape` (views of any strides).
// Returns false when more than kMaxBinaryAxes axes remain after merging.
bool binary_layout(const Tensor& a, const Tensor& b, const Shape& out_shape, BinaryLayout& layout);

// The largest power of two, up to 16, that divides in bytes the row length and the row offsets of
// every input that steps through its rows one element at a time; 0 when an input steps through a
// row with a stride other than 0 or 1 (its rows cannot be read as vectors).
std::uint8_t binary_row_alignment(const BinaryLayout& layout, std::size_t itemsize);

// The kernel of the CUDA rows path that serves a layout (Note [Binary kernels] in
// cuda/binary.cuh): the vector kernel's cut where one input is a row repeated over the rows of
// the other, contiguous one ([M, N] + [N]), or one value per row beside an input laid out like the
// output ([M, N] + [M, 1], [B, C, H, W] + [C, 1, 1]); the rows kernel's tiles otherwise.
enum class RowsKernel { kTiles, kRepeatedRow, kRowScalar };
struct RowsChoice {
  RowsKernel kernel = RowsKernel::kTiles;
  bool b = true;  // the repeated row or the values per row are b's (else a's)
};
RowsChoice rows_kernel(const BinaryLayout& layout);

}  // namespace tileops::kernels
