#include "tileops/core/shape.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace tileops {

std::string Shape::str() const {
  std::string out = "[";
  for (std::size_t i = 0; i < size_; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string((*this)[i]);
  }
  out += ']';
  return out;
}

std::optional<std::int64_t> Shape::checked_numel() const noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : *this) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 1);
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    // An empty axis still advances the step by one, as PyTorch does, so the strides of a
    // tensor with an empty axis match those of the same tensor before the axis was emptied.
    // Saturates rather than overflow: only shapes whose numel overflows get here, and every
    // caller that allocates or views memory rejects those first.
    if (__builtin_mul_overflow(step, shape[i] > 1 ? shape[i] : 1, &step)) {
      step = std::numeric_limits<std::int64_t>::max();
    }
  }
  return strides;
}

std::optional<std::int64_t> strided_extent(const Shape& shape, const Shape& strides) noexcept {
  if (shape.size() != strides.size()) return std::nullopt;
  bool empty = false;
  std::int64_t last = 0;  // offset of the last element, in elements
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || strides[i] < 0) return std::nullopt;
    if (shape[i] == 0) {
      empty = true;
      continue;
    }
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
        __builtin_add_overflow(last, reach, &last)) {
      return std::nullopt;
    }
  }
  if (empty) return 0;
  if (last == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  return last + 1;
}

namespace {

struct Axis {
  std::int64_t size;
  std::int64_t stride;
};

// Note [Internal overlap]: two elements of a view share a memory location exactly when a nonzero
// difference of index tuples d, |d[k]| < size[k], has sum(d[k] * stride[k]) == 0. Deciding that in
// general is a bounded knapsack, so the cheap, common answers come first: a stride-0 axis of
// length > 1 overlaps (PyTorch's has_internal_overlap says "yes" only then); more elements than
// offsets spanned overlap (pigeonhole); strides that each exceed the reach of every smaller-stride
// axis cannot overlap (every dense or padded layout, any axis order). What is left (interleaved
// strides such as [2, 3] over [3, 2]) is searched depth-first from the largest stride, each d[k]
// limited to the values the smaller-stride axes can still cancel, and the first nonzero d positive
// (d and -d are the same pair of elements). The search stops after kSearchBudget steps and
// reports no overlap, which is PyTorch's answer for every view it cannot decide at once.
constexpr int kSearchBudget = 1 << 14;

// Floor and ceiling of a / b for b > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  return a / b - (a % b != 0 && a < 0 ? 1 : 0);
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return a / b + (a % b != 0 && a > 0 ? 1 : 0);
}

// Axes by descending stride from `k` on; `reach[k]`: the largest offset the axes after k span.
// Whether sum(d[j] * stride[j]) over j >= k can equal -t, with a nonzero d overall (`nonzero`:
// some d before k is).
bool cancels(const Axis* axes, const std::int64_t* reach, std::size_t n, std::size_t k,
             std::int64_t t, bool nonzero, int& budget) noexcept {
  if (--budget < 0) return false;
  const Axis& a = axes[k];
  // |t + d * stride| <= reach[k]: what the smaller-stride axes can still cancel. |t| + reach[k]
  // stays within the view's extent, so neither bound overflows.
  std::int64_t lo = std::max(-(a.size - 1), ceil_div(-reach[k] - t, a.stride));
  const std::int64_t hi = std::min(a.size - 1, floor_div(reach[k] - t, a.stride));
  if (!nonzero) lo = std::max<std::int64_t>(lo, 0);
  for (std::int64_t d = lo; d <= hi; ++d) {
    const std::int64_t rest = t + d * a.stride;
    const bool any = nonzero || d != 0;
    if (k + 1 == n) {
      if (rest == 0 && any) return true;
    } else if (cancels(axes, reach, n, k + 1, rest, any, budget)) {
      return true;
    }
    if (budget < 0) return false;
  }
  return false;
}

}  // namespace

bool elements_overlap(const Shape& shape, const Shape& strides) noexcept {
  constexpr std::size_t kInline = 16;
  std::array<Axis, kInline> inline_axes;
  std::vector<Axis> heap_axes;
  Axis* axes = inline_axes.data();
  if (shape.size() > kInline) {
    heap_axes.resize(shape.size());
    axes = heap_axes.data();
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return false;  // no elements
    if (shape[i] == 1) continue;
    if (strides[i] == 0) return true;
    axes[n++] = {shape[i], strides[i]};
  }
  std::sort(axes, axes + n, [](const Axis& a, const Axis& b) { return a.stride < b.stride; });
  // Reach of the axes below each one, ascending; their sum is the view's extent - 1, which a
  // valid view keeps within int64.
  std::int64_t below = 0;
  bool separated = true;
  std::int64_t numel = 1;
  for (std::size_t k = 0; k < n; ++k) {
    separated = separated && axes[k].stride > below;
    below += (axes[k].size - 1) * axes[k].stride;
    numel *= axes[k].size;
  }
  if (separated) return false;
  if (numel > below + 1) return true;  // more elements than offsets
  std::reverse(axes, axes + n);
  std::array<std::int64_t, kInline> inline_reach;
  std::vector<std::int64_t> heap_reach;
  std::int64_t* reach = inline_reach.data();
  if (n > kInline) {
    heap_reach.resize(n);
    reach = heap_reach.data();
  }
  std::int64_t after = 0;
  for (std::size_t k = n; k-- > 0;) {
    reach[k] = after;
    after += (axes[k].size - 1) * axes[k].stride;
  }
  int budget = kSearchBudget;
  return cancels(axes, reach, n, 0, 0, false, budget);
}

}  // namespace tileops
