// Note [Binary layout] in binary_layout.hpp.
#include "kernels/elementwise/binary_layout.hpp"

#include <algorithm>
#include <array>

namespace tileops::kernels {
namespace {

// Strides of `t` against the output's axis k (right-aligned), 0 where t broadcasts.
std::int64_t stride_against(const Tensor& t, std::size_t rank, std::size_t k) {
  const std::size_t lead = rank - t.dim();
  if (k < lead || t.shape()[k - lead] == 1) return 0;
  return t.strides()[k - lead];
}

std::uint64_t lowest_bit(std::uint64_t v) { return v & (~v + 1); }

// Whether an input is laid out like the output: step 1 along the row and, along each outer axis,
// the output's stride.
bool like_output(const BinaryLayout& l, std::int64_t step, const std::int64_t* outer) {
  if (step != 1) return false;
  std::int64_t stride = l.cols;
  for (int k = l.outer_rank - 1; k >= 0; --k) {
    if (l.outer_shape[k] != 1 && outer[k] != stride) return false;
    stride *= l.outer_shape[k];
  }
  return true;
}

}  // namespace

RowsChoice rows_kernel(const BinaryLayout& l) {
  if (l.outer_rank == 1 && l.a_step == 1 && l.b_step == 1) {
    if (l.a_outer[0] == l.cols && l.b_outer[0] == 0) return {RowsKernel::kRepeatedRow, true};
    if (l.b_outer[0] == l.cols && l.a_outer[0] == 0) return {RowsKernel::kRepeatedRow, false};
  }
  if (l.outer_rank >= 1) {
    if (l.b_step == 0 && like_output(l, l.a_step, l.a_outer)) return {RowsKernel::kRowScalar, true};
    if (l.a_step == 0 && like_output(l, l.b_step, l.b_outer))
      return {RowsKernel::kRowScalar, false};
  }
  return {};
}

bool binary_layout(const Tensor& a, const Tensor& b, const Shape& out_shape, BinaryLayout& layout) {
  layout = BinaryLayout{};
  struct Axis {
    std::int64_t size, a, b;
  };
  // Innermost first; an axis merges into the one inside it when both inputs step across the
  // boundary as through one axis (the output, contiguous, always does).
  std::array<Axis, kMaxBinaryAxes> axes{};
  int count = 0;
  const std::size_t rank = out_shape.size();
  for (std::size_t k = rank; k-- > 0;) {
    const std::int64_t size = out_shape[k];
    if (size == 1) continue;
    const Axis axis{size, stride_against(a, rank, k), stride_against(b, rank, k)};
    if (count > 0) {
      Axis& inner = axes[static_cast<std::size_t>(count - 1)];
      if (axis.a == inner.a * inner.size && axis.b == inner.b * inner.size) {
        inner.size *= size;
        continue;
      }
    }
    if (count == kMaxBinaryAxes) return false;
    axes[static_cast<std::size_t>(count++)] = axis;
  }
  if (count == 0) return true;  // one element: a row of one
  layout.cols = axes[0].size;
  layout.a_step = axes[0].a;
  layout.b_step = axes[0].b;
  layout.outer_rank = count - 1;
  for (int k = 0; k < layout.outer_rank; ++k) {
    // Outermost first.
    const Axis& axis = axes[static_cast<std::size_t>(count - 1 - k)];
    layout.outer_shape[k] = axis.size;
    layout.a_outer[k] = axis.a;
    layout.b_outer[k] = axis.b;
    layout.rows *= axis.size;
  }
  return true;
}

std::uint8_t binary_row_alignment(const BinaryLayout& layout, std::size_t itemsize) {
  const auto bytes = static_cast<std::uint64_t>(itemsize);
  std::uint64_t offsets = static_cast<std::uint64_t>(layout.cols) * bytes;
  for (const auto& [step, outer] :
       {std::pair{layout.a_step, layout.a_outer}, std::pair{layout.b_step, layout.b_outer}}) {
    if (step != 0 && step != 1) return 0;
    if (step == 0) continue;  // read one element per row
    for (int k = 0; k < layout.outer_rank; ++k)
      offsets |= static_cast<std::uint64_t>(outer[k]) * bytes;
  }
  const std::uint64_t bit = lowest_bit(offsets);
  return static_cast<std::uint8_t>(bit == 0 || bit > 16 ? 16 : bit);
}

}  // namespace tileops::kernels
