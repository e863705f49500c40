#include "tileops/manifest/param_type.hpp"

#include <cmath>
#include <vector>

#include "manifest/text_util.hpp"

namespace tileops::manifest {

std::optional<ParamType> parse_param_type(std::string_view text) {
  ParamType type;
  type.text = std::string(text);
  std::vector<std::string> parts = detail::split_top_level(text, '|');
  std::vector<std::string> members;
  for (std::string& p : parts) {
    std::string t = detail::trim(p);
    if (t == "None") {
      if (type.optional) return std::nullopt;
      type.optional = true;
    } else if (!t.empty()) {
      members.push_back(t);
    } else {
      return std::nullopt;
    }
  }
  if (members.empty()) return std::nullopt;
  auto all_of = [&](auto pred) {
    for (const auto& m : members)
      if (!pred(m)) return false;
    return true;
  };
  // A single builtin type name comes first: "bool" also names a dtype.
  if (members.size() == 1) {
    static constexpr std::pair<const char*, ParamKind> kBuiltin[] = {
        {"int", ParamKind::kInt},           {"float", ParamKind::kFloat},
        {"bool", ParamKind::kBool},         {"str", ParamKind::kStr},
        {"list[int]", ParamKind::kIntList}, {"list[float]", ParamKind::kFloatList},
        {"dtype", ParamKind::kDType}};
    for (const auto& [word, kind] : kBuiltin) {
      if (members[0] == word) {
        type.kind = kind;
        return type;
      }
    }
  }
  if (all_of([](const std::string& m) { return detail::is_quoted(m); })) {
    type.kind = ParamKind::kEnum;
    for (const auto& m : members) type.enum_values.push_back(m.substr(1, m.size() - 2));
    return type;
  }
  if (all_of([](const std::string& m) { return parse_dtype(m).has_value(); })) {
    type.kind = ParamKind::kDType;
    for (const auto& m : members) type.dtypes.push_back(*parse_dtype(m));
    return type;
  }
  if (members.size() == 2 && ((members[0] == "int" && members[1] == "float") ||
                              (members[0] == "float" && members[1] == "int"))) {
    type.kind = ParamKind::kNumber;
    return type;
  }
  return std::nullopt;
}

std::optional<Value> conform_param_value(const ParamType& type, const Value& value) {
  if (value.is_none()) return type.optional ? std::optional<Value>(value) : std::nullopt;
  switch (type.kind) {
    case ParamKind::kInt:
      if (value.is_int()) return value;
      return std::nullopt;
    case ParamKind::kFloat:
      if (value.is_int()) return Value(static_cast<double>(value.as_int()));
      if (value.is_float() && std::isfinite(value.as_float())) return value;
      return std::nullopt;
    case ParamKind::kNumber:
      if (value.is_int()) return value;
      if (value.is_float() && std::isfinite(value.as_float())) return value;
      return std::nullopt;
    case ParamKind::kBool:
      if (value.is_bool()) return value;
      return std::nullopt;
    case ParamKind::kStr:
      if (value.is_str()) return value;
      return std::nullopt;
    case ParamKind::kEnum:
      if (!value.is_str()) return std::nullopt;
      for (const auto& e : type.enum_values)
        if (e == value.as_str()) return value;
      return std::nullopt;
    case ParamKind::kIntList:
      if (value.is_int_list()) return value;
      if (value.is_tuple() && value.as_tuple().empty()) return Value(Shape{});
      if (value.is_float_list() && value.as_float_list().empty()) return Value(Shape{});
      return std::nullopt;
    case ParamKind::kFloatList: {
      std::vector<double> out;
      if (value.is_float_list()) {
        out = value.as_float_list();
      } else if (value.is_int_list()) {
        for (std::int64_t v : value.as_int_list()) out.push_back(static_cast<double>(v));
      } else if (value.is_tuple() && value.as_tuple().empty()) {
      } else {
        return std::nullopt;
      }
      for (double d : out)
        if (!std::isfinite(d)) return std::nullopt;
      return Value(std::move(out));
    }
    case ParamKind::kDType: {
      std::optional<DType> d;
      if (value.is_dtype())
        d = value.as_dtype();
      else if (value.is_str())
        d = parse_dtype(value.as_str());
      if (!d) return std::nullopt;
      if (type.dtypes.empty()) return Value(*d);
      for (DType allowed : type.dtypes)
        if (allowed == *d) return Value(*d);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace tileops::manifest
