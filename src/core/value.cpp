#include "tileops/core/value.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>
#include <type_traits>

#include "tileops/core/error.hpp"

namespace tileops {

namespace {

[[noreturn]] void throw_kind_mismatch(Value::Kind expected, Value::Kind got) {
  throw CheckError("expected " + std::string(value_kind_name(expected)) + ", got " +
                   std::string(value_kind_name(got)));
}

// Exact comparison of an int with a float, as Python does it: 2**53 + 1 != 2.0**53.
bool int_equals_float(std::int64_t i, double d) {
  // [-2^63, 2^63) is exactly the range of doubles that convert to int64 without overflow.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(d >= -kTwo63 && d < kTwo63) || std::trunc(d) != d) return false;
  return static_cast<std::int64_t>(d) == i;
}

// Two tensors are equal when they are the same view: the same storage object (none for meta
// tensors) seen with the same geometry, dtype and device. Elementwise comparison is an op's job.
bool same_view(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  return a.storage() == b.storage() && a.byte_offset() == b.byte_offset() &&
         a.dtype() == b.dtype() && a.device() == b.device() && a.shape() == b.shape() &&
         a.strides() == b.strides();
}

std::string tensor_repr(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
  std::string out = "Tensor(shape=" + t.shape().str() +
                    ", dtype=" + std::string(dtype_name(t.dtype())) +
                    ", device=" + t.device().str();
  if (!t.is_contiguous()) out += ", strides=" + t.strides().str();
  return out + ")";
}

}  // namespace

std::string_view value_kind_name(Value::Kind kind) noexcept {
  switch (kind) {
    case Value::Kind::kNone:
      return "none";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kStr:
      return "str";
    case Value::Kind::kDType:
      return "dtype";
    case Value::Kind::kIntList:
      return "list[int]";
    case Value::Kind::kFloatList:
      return "list[float]";
    case Value::Kind::kTuple:
      return "tuple";
    case Value::Kind::kTensor:
      return "tensor";
  }
  return "unknown";
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest digits that round-trip, laid out as Python's repr lays them out: positional
  // for decimal exponents in [-4, 16), scientific with a signed two-digit exponent otherwise.
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string_view scientific(buffer, static_cast<std::size_t>(result.ptr - buffer));
  const std::size_t e = scientific.find('e');
  std::string_view mantissa = scientific.substr(0, e);
  const int exponent = std::atoi(std::string(scientific.substr(e + 1)).c_str());

  std::string out;
  if (!mantissa.empty() && mantissa.front() == '-') {
    out += '-';
    mantissa.remove_prefix(1);
  }
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }

  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    } else {
      const auto integer_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= integer_digits) {
        out += digits;
        out.append(integer_digits - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, integer_digits);
        out += '.';
        out += digits.substr(integer_digits);
      }
    }
    return out;
  }
  out += digits.front();
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += exponent < 0 ? "e-" : "e+";
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out += '0';
  out += std::to_string(magnitude);
  return out;
}

std::string string_repr(std::string_view text) {
  // Python's choice of quote: single, unless the text holds a single quote and no double one.
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(1, quote);
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;  // printable ASCII and UTF-8 sequences pass through, as Python prints them
    }
  }
  out += quote;
  return out;
}

void Value::kind_mismatch(Kind expected, Kind got) { throw_kind_mismatch(expected, got); }

const std::string& Value::as_str() const {
  if (!is_str()) throw_kind_mismatch(Kind::kStr, kind());
  return std::get<std::string>(v_);
}

const std::vector<double>& Value::as_float_list() const {
  if (!is_float_list()) throw_kind_mismatch(Kind::kFloatList, kind());
  return std::get<std::vector<double>>(v_);
}

const ValueTuple& Value::as_tuple() const {
  if (!is_tuple()) throw_kind_mismatch(Kind::kTuple, kind());
  return *std::get<std::shared_ptr<const ValueTuple>>(v_);
}

const Tensor& Value::as_tensor() const {
  if (!is_tensor()) throw_kind_mismatch(Kind::kTensor, kind());
  return *std::get<std::shared_ptr<const Tensor>>(v_);
}

std::string Value::repr() const {
  // kind() is the variant's index; these pin the order of the alternatives to the enum.
  static_assert(std::is_same_v<
                std::variant_alternative_t<static_cast<std::size_t>(Kind::kIntList), decltype(v_)>,
                Shape>);
  static_assert(std::is_same_v<
                std::variant_alternative_t<static_cast<std::size_t>(Kind::kTensor), decltype(v_)>,
                std::shared_ptr<const Tensor>>);
  static_assert(std::variant_size_v<decltype(v_)> == static_cast<std::size_t>(Kind::kTensor) + 1);
  switch (kind()) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return as_bool() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(as_int());
    case Kind::kFloat:
      return float_repr(as_float());
    case Kind::kStr:
      return string_repr(as_str());
    case Kind::kDType:
      return std::string(dtype_name(as_dtype()));
    case Kind::kIntList:
      return as_int_list().str();
    case Kind::kFloatList: {
      std::string out = "[";
      const std::vector<double>& floats = as_float_list();
      for (std::size_t i = 0; i < floats.size(); ++i) {
        if (i > 0) out += ", ";
        out += float_repr(floats[i]);
      }
      return out + "]";
    }
    case Kind::kTuple: {
      const ValueTuple& items = as_tuple();
      std::string out = "(";
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += items[i].repr();
      }
      // Python spells a one-element tuple with a trailing comma.
      if (items.size() == 1) out += ',';
      return out + ")";
    }
    case Kind::kTensor:
      return tensor_repr(as_tensor());
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.kind() != b.kind()) {
    if (a.is_int() && b.is_float()) return int_equals_float(a.as_int(), b.as_float());
    if (a.is_float() && b.is_int()) return int_equals_float(b.as_int(), a.as_float());
    return false;
  }
  switch (a.kind()) {
    case Kind::kNone:
      return true;
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kInt:
      return a.as_int() == b.as_int();
    case Kind::kFloat:
      return a.as_float() == b.as_float();  // NaN != NaN, as in Python
    case Kind::kStr:
      return a.as_str() == b.as_str();
    case Kind::kDType:
      return a.as_dtype() == b.as_dtype();
    case Kind::kIntList:
      return a.as_int_list() == b.as_int_list();
    case Kind::kFloatList:
      return a.as_float_list() == b.as_float_list();
    case Kind::kTuple: {
      // Shared tuples are equal without a walk; otherwise element by element.
      const auto& pa = std::get<std::shared_ptr<const ValueTuple>>(a.v_);
      const auto& pb = std::get<std::shared_ptr<const ValueTuple>>(b.v_);
      return pa == pb || *pa == *pb;
    }
    case Kind::kTensor:
      return same_view(a.as_tensor(), b.as_tensor());
  }
  return false;
}

ParamMap::ParamMap(std::initializer_list<std::pair<std::string, Value>> items) {
  items_.reserve(items.size());
  for (const auto& [name, value] : items) {
    if (contains(name)) throw CheckError("params: '" + name + "' is given twice");
    items_.emplace_back(name, value);
  }
}

ParamMap& ParamMap::set(std::string_view name, Value value) {
  for (auto& item : items_) {
    if (item.first == name) {
      item.second = std::move(value);
      return *this;
    }
  }
  items_.emplace_back(std::string(name), std::move(value));
  return *this;
}

const Value* ParamMap::find(std::string_view name) const noexcept {
  for (const auto& item : items_) {
    if (item.first == name) return &item.second;
  }
  return nullptr;
}

const Value& ParamMap::at(std::string_view name) const {
  if (const Value* value = find(name)) return *value;
  std::string known;
  for (const auto& item : items_) {
    known += known.empty() ? "" : ", ";
    known += item.first;
  }
  throw CheckError("params: no param '" + std::string(name) +
                   "' (have: " + (known.empty() ? std::string("none") : known) + ")");
}

std::string ParamMap::repr() const {
  std::string out = "{";
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) out += ", ";
    out += string_repr(items_[i].first) + ": " + items_[i].second.repr();
  }
  return out + "}";
}

}  // namespace tileops
