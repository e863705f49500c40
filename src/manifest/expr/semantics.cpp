#include "manifest/expr/semantics.hpp"

#include <cmath>
#include <limits>

#include "tileops/manifest/expr.hpp"

namespace tileops::expr {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  std::size_t offset = longer.size() - shorter.size();
  for (std::size_t i = 0; i < shorter.size(); ++i) {
    std::int64_t x = longer[offset + i];
    std::int64_t y = shorter[i];
    if (x == y || y == 1) continue;
    if (x != 1) return std::nullopt;
    out[offset + i] = y;  // a length-1 axis stretches, also to 0
  }
  return out;
}

std::optional<std::int64_t> normalize_axis(std::int64_t a, std::int64_t rank) {
  if (rank < 0) return std::nullopt;
  // A rank-0 tensor takes 0 and -1, as if it had one axis (PyTorch's wrap_dim).
  std::int64_t bound = rank == 0 ? 1 : rank;
  if (a < -bound || a >= bound) return std::nullopt;
  return a < 0 ? a + bound : a;
}

namespace detail {

// CPython's float_divmod, so that results agree with Python to the last bit.
double float_floor_div(double a, double b) noexcept {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) div -= 1.0;
  }
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

double float_mod(double a, double b) noexcept {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

std::optional<Shape> reduced_shape(const Shape& shape, const Value& dim, bool keepdim,
                                   std::string_view mode, ReduceFailure& failure) {
  auto rank = static_cast<std::int64_t>(shape.size());
  // One flag per axis; rank 0 still has the one pseudo-axis normalize_axis admits.
  std::size_t flags_size = std::max<std::size_t>(shape.size(), 1);
  Shape reduce = Shape::filled(flags_size, 0);
  auto mark = [&](std::int64_t a) {
    std::optional<std::int64_t> n = normalize_axis(a, rank);
    if (!n) {
      failure = {ReduceFailure::kAxisRange, a};
      return false;
    }
    if (reduce[static_cast<std::size_t>(*n)] != 0) {
      failure = {ReduceFailure::kDuplicate, *n};
      return false;
    }
    reduce[static_cast<std::size_t>(*n)] = 1;
    return true;
  };
  if (mode != "full" && mode != "noop" && mode != "reject") {
    failure = {ReduceFailure::kBadMode, 0};
    return std::nullopt;
  }
  if (dim.is_none()) {
    for (auto& f : reduce) f = 1;
  } else if (dim.is_int()) {
    if (!mark(dim.as_int())) return std::nullopt;
  } else {
    const Shape& axes = dim.as_int_list();
    if (axes.empty()) {
      if (mode == "reject") {
        failure = {ReduceFailure::kEmptyRejected, 0};
        return std::nullopt;
      }
      if (mode == "noop") return shape;
      for (auto& f : reduce) f = 1;
    }
    for (std::int64_t a : axes)
      if (!mark(a)) return std::nullopt;
  }
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (reduce[i] == 0)
      out.push_back(shape[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

bool valid_axes(const Value& dim, std::int64_t rank) {
  if (dim.is_none()) return true;
  if (dim.is_int()) return normalize_axis(dim.as_int(), rank).has_value();
  for (std::int64_t a : dim.as_int_list())
    if (!normalize_axis(a, rank)) return false;
  return true;
}

bool unique_axes(const Value& dim, std::int64_t rank) {
  if (!dim.is_int_list()) return true;
  const Shape& axes = dim.as_int_list();
  // Axes that do not normalise are compared as written.
  auto norm = [rank](std::int64_t a) { return normalize_axis(a, rank).value_or(a); };
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (std::size_t j = i + 1; j < axes.size(); ++j)
      if (norm(axes[i]) == norm(axes[j])) return false;
  return true;
}

// Note [Representable scalars]
// representable(v, T) answers whether PyTorch converts the Python scalar v to dtype T without an
// overflow error (c10::overflows, with strict_unsigned off):
// - a bool converts to every dtype;
// - an int converts to an integer or bool dtype within its range, where an unsigned target
//   (uint8, bool) also admits negatives down to -max (two's-complement wrap: -1 -> 255); and to
//   a float dtype within its finite range;
// - a float converts to a float dtype within its finite range; infinities convert when the
//   dtype has them (float8_e4m3fn has none) and NaN converts to every float dtype. A float into
//   an integer or bool dtype is not representable: the op would need a float tensor.
namespace {

struct Limits {
  double lowest, max;
  bool has_infinity;
};

Limits float_limits(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {-65504.0, 65504.0, true};
    case DType::kBFloat16:
      return {-3.38953138925153547590e38, 3.38953138925153547590e38, true};
    case DType::kFloat32:
      return {-std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), true};
    case DType::kFloat8E4M3FN:
      return {-448.0, 448.0, false};
    case DType::kFloat8E5M2:
      return {-57344.0, 57344.0, true};
    default:
      return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max(), true};
  }
}

struct IntLimits {
  std::int64_t lowest, max;
  bool is_unsigned;
};

IntLimits int_limits(DType t) {
  switch (t) {
    case DType::kBool:
      return {0, 1, true};
    case DType::kUInt8:
      return {0, 255, true};
    case DType::kInt8:
      return {-128, 127, false};
    case DType::kInt16:
      return {-32768, 32767, false};
    case DType::kInt32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(),
              false};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
              false};
  }
}

}  // namespace

bool representable(const Value& v, DType dtype) {
  if (v.is_bool()) return true;
  if (v.is_int()) {
    std::int64_t x = v.as_int();
    if (is_floating(dtype)) {
      Limits l = float_limits(dtype);
      auto d = static_cast<double>(x);
      return d >= l.lowest && d <= l.max;
    }
    IntLimits l = int_limits(dtype);
    if (l.is_unsigned && x < 0) return x >= -l.max;
    return x >= l.lowest && x <= l.max;
  }
  double x = v.as_float();
  if (!is_floating(dtype)) return false;
  Limits l = float_limits(dtype);
  if (std::isnan(x)) return true;
  if (std::isinf(x)) return l.has_infinity;
  return x >= l.lowest && x <= l.max;
}

std::optional<std::string_view> category_of(const Value& v) noexcept {
  switch (v.kind()) {
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kDType:
      switch (dtype_category(v.as_dtype())) {
        case DTypeCategory::kBool:
          return "bool";
        case DTypeCategory::kInt:
          return "int";
        case DTypeCategory::kFloat:
          return "float";
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace detail
}  // namespace tileops::expr
