#include "ops/gemm/gemm_layout.hpp"

#include <algorithm>
#include <optional>

namespace tileops::ops {
namespace {

struct Fit {
  bool column_major = false;
  std::int64_t ld = 0;
};

// The layout of a matrix [r, c] with strides (sr, sc), row-major first (a contiguous matrix and a
// single element are row-major). Note [GEMM operand layouts].
std::optional<Fit> fit(std::int64_t r, std::int64_t c, std::int64_t sr, std::int64_t sc) {
  const bool one_row = r <= 1, one_col = c <= 1;
  const std::int64_t row_ld = std::max<std::int64_t>(c, 1), col_ld = std::max<std::int64_t>(r, 1);
  if ((one_col || sc == 1) && (one_row || sr >= row_ld)) return Fit{false, one_row ? row_ld : sr};
  if ((one_row || sr == 1) && (one_col || sc >= col_ld)) return Fit{true, one_col ? col_ld : sc};
  return std::nullopt;
}

// The single stride that steps through the flattened batch, or nullopt when the axes do not
// merge. `strides` are the operand's batch strides expanded to `batch` (0 on broadcast axes).
std::optional<std::int64_t> merged_batch_stride(const Shape& batch, const Shape& strides) {
  std::optional<std::int64_t> step;
  std::int64_t later = 1;  // product of the batch axes after the current one
  for (std::size_t i = batch.size(); i-- > 0;) {
    if (batch[i] == 1) continue;
    if (!step) step = strides[i] / later;  // fixed by the last axis longer than 1
    if (strides[i] != *step * later) return std::nullopt;
    later *= batch[i];
  }
  return step.value_or(0);
}

// t's batch strides aligned to `batch` from the right; an axis t lacks or has as 1 broadcasts.
Shape expanded_batch_strides(const Tensor& t, const Shape& batch) {
  const std::size_t lead = t.dim() - 2;
  Shape expanded = Shape::filled(batch.size(), 0);
  for (std::size_t i = 0; i < lead; ++i)
    if (t.shape()[i] != 1) expanded[batch.size() - lead + i] = t.strides()[i];
  return expanded;
}

std::uint8_t alignment_of(const Tensor& t, const OperandPlan& plan) {
  // A copy is a fresh (aligned) allocation: only its ld and matrix stride count.
  const bool own_pointer = !plan.copy && !t.is_meta() && t.numel() > 0;
  const auto item = static_cast<std::uintptr_t>(t.itemsize());
  const std::uintptr_t bits = (own_pointer ? reinterpret_cast<std::uintptr_t>(t.data_ptr()) : 0) |
                              static_cast<std::uintptr_t>(plan.ld) * item |
                              static_cast<std::uintptr_t>(plan.batch_stride) * item | 16;
  return static_cast<std::uint8_t>(bits & (~bits + 1));
}

// `step` is the merged batch stride of a batch (nullopt: the batch axes do not merge), or nullopt
// with `batched` false for a single matrix.
OperandPlan plan_from(const Tensor& t, std::optional<Fit> f, bool batched,
                      std::optional<std::int64_t> step) {
  const std::size_t rank = t.dim();
  const std::int64_t r = t.shape()[rank - 2], c = t.shape()[rank - 1];
  OperandPlan plan;
  if (!f || (batched && !step)) {
    plan.copy = true;
    f = fit(r, c, c, 1);
    step = r * c;
  }
  plan.column_major = f->column_major;
  plan.ld = f->ld;
  plan.batch_stride = batched ? *step : 0;
  plan.alignment = alignment_of(t, plan);
  return plan;
}

Shape view_strides(const OperandPlan& plan) {
  return plan.column_major ? Shape{1, plan.ld} : Shape{plan.ld, 1};
}

}  // namespace

OperandPlan plan_operand(const Tensor& t) {
  return plan_from(t, fit(t.shape()[0], t.shape()[1], t.strides()[0], t.strides()[1]), false,
                   std::nullopt);
}

OperandPlan plan_operand(const Tensor& t, const Shape& batch) {
  const std::size_t rank = t.dim();
  return plan_from(
      t,
      fit(t.shape()[rank - 2], t.shape()[rank - 1], t.strides()[rank - 2], t.strides()[rank - 1]),
      true, merged_batch_stride(batch, expanded_batch_strides(t, batch)));
}

Tensor operand_view(const Tensor& t, const OperandPlan& plan) {
  const Tensor source = plan.copy ? t.contiguous() : t;
  return source.as_strided(t.shape(), view_strides(plan), source.byte_offset());
}

Tensor operand_view(const Tensor& t, const Shape& batch, const OperandPlan& plan) {
  const std::size_t rank = t.dim();
  const std::int64_t r = t.shape()[rank - 2], c = t.shape()[rank - 1];
  Tensor source = t;
  if (plan.copy) {
    // The broadcast batch materialised row-major: [*batch, r, c] contiguous.
    Shape full = batch, strides = expanded_batch_strides(t, batch);
    full.push_back(r);
    full.push_back(c);
    strides.push_back(t.strides()[rank - 2]);
    strides.push_back(t.strides()[rank - 1]);
    source = t.as_strided(full, strides, t.byte_offset()).contiguous();
  }
  const Shape matrix = view_strides(plan);
  return source.as_strided(Shape{batch.numel(), r, c},
                           Shape{plan.batch_stride, matrix[0], matrix[1]}, source.byte_offset());
}

Tensor outer_slice(const Tensor& t, const Shape& batch, std::size_t outer_axes,
                   std::int64_t index) {
  const std::size_t lead = t.dim() - 2, first_batch_axis = batch.size() - lead;
  const auto item = static_cast<std::int64_t>(t.itemsize());
  std::int64_t offset = t.byte_offset();
  for (std::size_t j = outer_axes; j-- > 0;) {
    const std::int64_t coordinate = index % batch[j];
    index /= batch[j];
    if (j >= first_batch_axis && t.shape()[j - first_batch_axis] != 1)
      offset += coordinate * t.strides()[j - first_batch_axis] * item;
  }
  Shape shape, strides;
  for (std::size_t i = outer_axes > first_batch_axis ? outer_axes - first_batch_axis : 0;
       i < t.dim(); ++i) {
    shape.push_back(t.shape()[i]);
    strides.push_back(t.strides()[i]);
  }
  return t.as_strided(shape, strides, offset);
}

BatchSplit split_batch(const Tensor& a, const Tensor& b, const Shape& batch) {
  BatchSplit split;
  split.inner = batch;
  std::int64_t calls = 1;
  for (std::size_t outer = 0; outer <= batch.size(); ++outer) {
    if (outer > 0) calls *= batch[outer - 1];
    if (calls > kMaxBatchLoop) break;
    Shape inner;
    for (std::size_t j = outer; j < batch.size(); ++j) inner.push_back(batch[j]);
    if (plan_operand(outer_slice(a, batch, outer, 0), inner).copy ||
        plan_operand(outer_slice(b, batch, outer, 0), inner).copy)
      continue;
    split.outer_axes = outer;
    split.inner = inner;
    split.calls = calls;
    // Each call's operands start one outer step further: their alignment counts too.
    std::uintptr_t bits = 16;
    for (const Tensor* t : {&a, &b}) {
      const std::size_t lead = t->dim() - 2, first_batch_axis = batch.size() - lead;
      for (std::size_t j = first_batch_axis; j < outer; ++j)
        bits |= static_cast<std::uintptr_t>(t->strides()[j - first_batch_axis]) * t->itemsize();
    }
    split.alignment = static_cast<std::uint8_t>(bits & (~bits + 1));
    return split;
  }
  return split;  // materialised: one call over the whole batch
}

}  // namespace tileops::ops
