// How the gemm ops hand their operands to kernels: as views when their strides fit a layout the
// kernels read, else as row-major copies.
#pragma once

#include <cstdint>

#include "tileops/core/shape.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::ops {

// Note [GEMM operand layouts]
// cuBLAS, OpenBLAS and our own kernels read a matrix [R, C] in one of two layouts: row-major
// (strides (ld, 1), ld >= C) or column-major (strides (1, ld), ld >= R). The transposed view of an
// nn.Linear weight, `W.t()`, is column-major, and a slice of columns `x[:, :k]` is row-major with a
// longer ld, so both are read in place, as torch.matmul reads them. An axis of length <= 1 has no
// stride that matters; the view is rewritten with the stride the kernels expect there (ld =
// max(C, 1) for a single row), so that no kernel sees a stride it must not use. Any other strides
// (a stride-0 axis from expand, a slice of rows with a step) are copied to row-major first. A
// batch's leading axes must merge into one batch stride (0 when one matrix is broadcast over the
// batch); a batch that does not, such as [8, 1] broadcast against [1, 16], is materialised as
// torch.matmul materialises it.
// How an operand will reach the kernels: planned from its geometry alone (meta tensors included),
// so that a call spec is built, and a kernel selected, before anything is copied.
struct OperandPlan {
  bool copy = false;  // its strides fit no layout: a row-major copy is read
  bool column_major = false;
  std::int64_t ld = 0;            // elements between rows (row-major) or columns (column-major)
  std::int64_t batch_stride = 0;  // elements between a batch's matrices; 0 broadcasts one matrix
  std::uint8_t alignment = 16;    // of the pointer, ld and batch stride in bytes, at most 16
};

// `t` [R, C]; or, with `batch`, `t` [*batch', R, C] whose leading axes broadcast to `batch`, read
// as [L, R, C] with L = batch.numel().
OperandPlan plan_operand(const Tensor& t);
OperandPlan plan_operand(const Tensor& t, const Shape& batch);

// The view (or copy) a kernel reads: [R, C] or [L, R, C] with the plan's strides.
Tensor operand_view(const Tensor& t, const OperandPlan& plan);
Tensor operand_view(const Tensor& t, const Shape& batch, const OperandPlan& plan);

// Note [Bmm batch loops]
// A broadcast batch whose axes do not merge into one stride, such as a [8, 1] batch against a
// [1, 16] one, would be materialised (Note [GEMM operand layouts]): 128 copies of each operand.
// Instead the batch is split into leading `outer` axes, a loop of kernel calls, and trailing
// `inner` axes over which both operands do merge, each call a strided batch over them (here 8
// calls of a batch of 16, nothing copied). The split with the fewest outer calls wins; past
// kMaxBatchLoop calls the operands are materialised after all, as one call beats many.
inline constexpr std::int64_t kMaxBatchLoop = 64;

struct BatchSplit {
  std::size_t outer_axes = 0;   // batch[0, outer_axes) are looped over
  Shape inner;                  // the rest, one strided batch per call
  std::int64_t calls = 1;       // the product of the outer axes
  std::uint8_t alignment = 16;  // of the outer steps of both operands, in bytes
};
BatchSplit split_batch(const Tensor& a, const Tensor& b, const Shape& batch);

// `t` [*batch', R, C] at the outer index `index` (row-major over batch[0, outer_axes)): the view
// whose leading axes broadcast to the inner batch.
Tensor outer_slice(const Tensor& t, const Shape& batch, std::size_t outer_axes, std::int64_t index);

}  // namespace tileops::ops
