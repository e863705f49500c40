#include "tileops/core/shape.hpp"

#include <limits>
#include <string>

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

}  // namespace tileops
