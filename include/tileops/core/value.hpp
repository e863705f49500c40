// Value: what a manifest param holds, and what a manifest expression evaluates to.
// ParamMap: the ordered name -> Value map an op is constructed with, the single source of its
// params.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops {

class Value;
using ValueTuple = std::vector<Value>;

class Value {
 public:
  enum class Kind : std::uint8_t {
    kNone,
    kBool,
    kInt,
    kFloat,
    kStr,
    kDType,
    kIntList,    // list[int] params, shapes
    kFloatList,  // list[float] params
    kTuple,      // heterogeneous tuples inside expressions
    kTensor,     // construction-time tensors
  };

  Value() noexcept = default;
  Value(std::nullptr_t) noexcept {}
  Value(bool b) noexcept : v_(b) {}
  Value(int i) noexcept : v_(static_cast<std::int64_t>(i)) {}
  Value(std::int64_t i) noexcept : v_(i) {}
  Value(double d) noexcept : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(DType d) noexcept : v_(d) {}
  Value(Shape s) : v_(std::move(s)) {}
  Value(std::initializer_list<std::int64_t> ints) : v_(Shape(ints)) {}
  Value(std::vector<double> floats) : v_(std::move(floats)) {}
  Value(ValueTuple tuple) : v_(std::make_shared<const ValueTuple>(std::move(tuple))) {}
  Value(Tensor t) : v_(std::make_shared<const Tensor>(std::move(t))) {}

  Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
  bool is_none() const noexcept { return kind() == Kind::kNone; }
  bool is_bool() const noexcept { return kind() == Kind::kBool; }
  bool is_int() const noexcept { return kind() == Kind::kInt; }
  bool is_float() const noexcept { return kind() == Kind::kFloat; }
  bool is_number() const noexcept { return is_int() || is_float(); }
  bool is_str() const noexcept { return kind() == Kind::kStr; }
  bool is_dtype() const noexcept { return kind() == Kind::kDType; }
  bool is_int_list() const noexcept { return kind() == Kind::kIntList; }
  bool is_float_list() const noexcept { return kind() == Kind::kFloatList; }
  bool is_tuple() const noexcept { return kind() == Kind::kTuple; }
  bool is_tensor() const noexcept { return kind() == Kind::kTensor; }

  // Accessors; each throws CheckError naming the expected kind when the value holds another.
  // The ones the call check reads are inline.
  bool as_bool() const {
    if (const bool* b = std::get_if<bool>(&v_)) return *b;
    kind_mismatch(Kind::kBool, kind());
  }
  std::int64_t as_int() const {
    if (const std::int64_t* i = std::get_if<std::int64_t>(&v_)) return *i;
    kind_mismatch(Kind::kInt, kind());
  }
  double as_float() const {  // ints widen
    if (const double* d = std::get_if<double>(&v_)) return *d;
    if (const std::int64_t* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
    kind_mismatch(Kind::kFloat, kind());
  }
  const std::string& as_str() const;
  DType as_dtype() const {
    if (const DType* d = std::get_if<DType>(&v_)) return *d;
    kind_mismatch(Kind::kDType, kind());
  }
  const Shape& as_int_list() const {
    if (const Shape* s = std::get_if<Shape>(&v_)) return *s;
    kind_mismatch(Kind::kIntList, kind());
  }
  const std::vector<double>& as_float_list() const;
  const ValueTuple& as_tuple() const;
  const Tensor& as_tensor() const;

  // Python-like rendering: None, True, 3, 1.5, 'tanh', bfloat16, [1, 2], (1, 'a'); tensors as
  // Tensor(shape=[2, 3], dtype=float32, device=cpu).
  std::string repr() const;

  // Python's equality for numbers (an int equals a float of the same value, exactly; NaN equals
  // nothing); otherwise the kinds must match. Tensors are equal when they are the same view:
  // the same storage, geometry, dtype and device.
  friend bool operator==(const Value& a, const Value& b);

 private:
  [[noreturn]] static void kind_mismatch(Kind expected, Kind got);

  std::variant<std::monostate, bool, std::int64_t, double, std::string, DType, Shape,
               std::vector<double>, std::shared_ptr<const ValueTuple>,
               std::shared_ptr<const Tensor>>
      v_;  // tensors and tuples are held by pointer so that a Value stays small
};

// "none", "bool", "int", "float", "str", "dtype", "list[int]", "list[float]", "tuple", "tensor".
std::string_view value_kind_name(Value::Kind kind) noexcept;

// Python's repr of a float: the shortest digits that round-trip, "1.0", "1e-05", "1e+16", "inf".
std::string float_repr(double value);
// Python's repr of a str: quoted, with backslash escapes for quotes and control characters.
std::string string_repr(std::string_view text);

// Ordered name -> Value. Lookups are linear: maps hold a handful of params.
class ParamMap {
 public:
  ParamMap() = default;
  // Throws CheckError when a name appears twice.
  ParamMap(std::initializer_list<std::pair<std::string, Value>> items);

  // Appends, or replaces the value in place (the name keeps its position).
  ParamMap& set(std::string_view name, Value value);
  bool contains(std::string_view name) const noexcept { return find(name) != nullptr; }
  const Value* find(std::string_view name) const noexcept;
  // Throws CheckError when absent.
  const Value& at(std::string_view name) const;

  std::size_t size() const noexcept { return items_.size(); }
  auto begin() const noexcept { return items_.begin(); }
  auto end() const noexcept { return items_.end(); }

  // {'dim': [4096], 'eps': 1e-06}, in insertion order.
  std::string repr() const;

 private:
  std::vector<std::pair<std::string, Value>> items_;
};

}  // namespace tileops
