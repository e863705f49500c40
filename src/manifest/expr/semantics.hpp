// The language's value semantics, apart from the tree walk: Python's integer and float arithmetic
// over exact int64, and the shape primitives with PyTorch's rules. The evaluator calls these; the
// signature plan reaches the shared ones through expr.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/value.hpp"

namespace tileops::expr::detail {

// Integer results; nullopt on int64 overflow. Division by zero is the caller's check.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_sub(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Python's a // b (rounds toward negative infinity); b != 0. nullopt for INT64_MIN // -1.
inline std::optional<std::int64_t> floor_div(std::int64_t a, std::int64_t b) noexcept {
  if (b == -1) return checked_sub(0, a);
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
// Python's a % b (takes the divisor's sign); b != 0.
inline std::int64_t floor_mod(std::int64_t a, std::int64_t b) noexcept {
  if (b == -1) return 0;  // INT64_MIN % -1 is undefined in C++
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Python's float // and %; b != 0.
double float_floor_div(double a, double b) noexcept;
double float_mod(double a, double b) noexcept;

// Why a reduced() call fails, for the evaluator's message.
struct ReduceFailure {
  enum Why : std::uint8_t { kNone, kAxisRange, kDuplicate, kEmptyRejected, kBadMode } why = kNone;
  std::int64_t axis = 0;
};
// The shape torch.sum(x, dim, keepdim) gives for x of shape `shape`; `dim` is None, an Int or an
// IntSeq; `mode` says what an empty dim list means ('full', 'noop' or 'reject').
std::optional<Shape> reduced_shape(const Shape& shape, const Value& dim, bool keepdim,
                                   std::string_view mode, ReduceFailure& failure);
// valid_axes / unique_axes over a dim that is None, an Int or an IntSeq.
bool valid_axes(const Value& dim, std::int64_t rank);
bool unique_axes(const Value& dim, std::int64_t rank);

// PyTorch's scalar-to-dtype overflow rule (Note [Representable scalars] in semantics.cpp).
bool representable(const Value& v, DType dtype);

// 'bool', 'int' or 'float'; nullopt for a value that is none of a number, a bool or a dtype.
std::optional<std::string_view> category_of(const Value& v) noexcept;

}  // namespace tileops::expr::detail
