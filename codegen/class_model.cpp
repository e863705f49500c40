#include "class_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "tileops/core/error.hpp"

namespace tileops::codegen {
namespace {

using manifest::Entry;
using manifest::ParamDecl;
using manifest::ParamKind;

// C++20's keywords and alternative tokens: a manifest name among them cannot be an argument.
constexpr std::array<std::string_view, 92> kCppKeywords = {
    "alignas",       "alignof",     "and",
    "and_eq",        "asm",         "auto",
    "bitand",        "bitor",       "bool",
    "break",         "case",        "catch",
    "char",          "char8_t",     "char16_t",
    "char32_t",      "class",       "compl",
    "concept",       "const",       "consteval",
    "constexpr",     "constinit",   "const_cast",
    "continue",      "co_await",    "co_return",
    "co_yield",      "decltype",    "default",
    "delete",        "do",          "double",
    "dynamic_cast",  "else",        "enum",
    "explicit",      "export",      "extern",
    "false",         "float",       "for",
    "friend",        "goto",        "if",
    "inline",        "int",         "long",
    "mutable",       "namespace",   "new",
    "noexcept",      "not",         "not_eq",
    "nullptr",       "operator",    "or",
    "or_eq",         "private",     "protected",
    "public",        "register",    "reinterpret_cast",
    "requires",      "return",      "short",
    "signed",        "sizeof",      "static",
    "static_assert", "static_cast", "struct",
    "switch",        "template",    "this",
    "thread_local",  "throw",       "true",
    "try",           "typedef",     "typeid",
    "typename",      "union",       "unsigned",
    "using",         "virtual",     "void",
    "volatile",      "wchar_t",     "while",
    "xor",           "xor_eq"};

// Names a generated class already uses: Op's members (a param accessor of the same name would
// hide or clash with them) and the names the generated code declares itself.
constexpr std::array<std::string_view, 30> kReservedMembers = {
    "allocate_output", "built_entries",  "call",          "delegate_for",   "effect_branch",
    "eval_roofline",   "explain_call",   "forward",       "held_delegates", "instance_key",
    "iter_kernels",    "kernel_calls",   "kernel_for",    "key_for",        "kName",
    "last_call",       "name",           "op_class",      "options",        "param",
    "params",          "request_tune",   "reset_binding", "Result",         "serving_target",
    "target",          "tune_requested", "verdicts",      "inputs",         "operator"};

// The loader's diagnostic form, "<file>:<line>:<column>: <entry>: <field>: <what>", at the
// declaration the problem is in (the entry's name when no declaration carries it).
[[noreturn]] void fail(const Entry& entry, const manifest::Origin& where, const std::string& field,
                       const std::string& what) {
  const manifest::Origin& at = where.line > 0 ? where : entry.origins.name;
  const std::string place =
      at.line > 0 ? fmt::format("{}:{}:{}", entry.file, at.line, at.column) : entry.file;
  throw ManifestError(fmt::format("{}: {}: {}: {} (tileops_opgen cannot derive the op class)",
                                  place, entry.name, field, what));
}
[[noreturn]] void fail(const Entry& entry, const std::string& field, const std::string& what) {
  fail(entry, manifest::Origin{}, field, what);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A name the generated code declares: an identifier, no keyword, no reserved name; `__` and a
// leading `_` plus capital are reserved to the implementation.
void check_name(const Entry& entry, const manifest::Origin& where, const std::string& field,
                const std::string& name, bool member) {
  if (!is_identifier(name))
    fail(entry, where, field, fmt::format("'{}' is not a C++ identifier", name));
  if (std::find(kCppKeywords.begin(), kCppKeywords.end(), name) != kCppKeywords.end())
    fail(entry, where, field, fmt::format("'{}' is a C++ keyword", name));
  if (name.find("__") != std::string::npos ||
      (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    fail(entry, where, field, fmt::format("'{}' is reserved to the C++ implementation", name));
  if (member &&
      std::find(kReservedMembers.begin(), kReservedMembers.end(), name) != kReservedMembers.end())
    fail(entry, where, field,
         fmt::format("'{}' clashes with a member every op class has (Op::{} or the generated code)",
                     name, name));
}

std::string dtype_enumerator(DType d) {
  switch (d) {
    case DType::kBool:
      return "DType::kBool";
    case DType::kUInt8:
      return "DType::kUInt8";
    case DType::kInt8:
      return "DType::kInt8";
    case DType::kInt16:
      return "DType::kInt16";
    case DType::kInt32:
      return "DType::kInt32";
    case DType::kInt64:
      return "DType::kInt64";
    case DType::kFloat16:
      return "DType::kFloat16";
    case DType::kBFloat16:
      return "DType::kBFloat16";
    case DType::kFloat32:
      return "DType::kFloat32";
    case DType::kFloat64:
      return "DType::kFloat64";
    case DType::kFloat8E4M3FN:
      return "DType::kFloat8E4M3FN";
    case DType::kFloat8E5M2:
      return "DType::kFloat8E5M2";
  }
  return "DType::kFloat32";
}

std::string cpp_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string int_list_literal(const Shape& s) {
  std::string out = "Shape{";
  for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
  return out + "}";
}

std::string float_list_literal(const std::vector<double>& v) {
  std::string out = "std::vector<double>{";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + float_repr(v[i]);
  return out + "}";
}

// How one param kind reads and writes: its C++ type, a literal of a value, and the accessor of
// Value that reads it back.
struct KindSpelling {
  std::string type;
  std::string accessor;  // "as_int()"; empty for kNumber, which stays a Value
};

KindSpelling spelling(const Entry& entry, const ParamDecl& p) {
  switch (p.type.kind) {
    case ParamKind::kInt:
      return {"std::int64_t", "as_int()"};
    case ParamKind::kFloat:
      return {"double", "as_float()"};
    case ParamKind::kNumber:
      return {"Value", ""};
    case ParamKind::kBool:
      return {"bool", "as_bool()"};
    case ParamKind::kStr:
    case ParamKind::kEnum:
      return {"std::string", "as_str()"};
    case ParamKind::kIntList:
      return {"Shape", "as_int_list()"};
    case ParamKind::kFloatList:
      return {"std::vector<double>", "as_float_list()"};
    case ParamKind::kDType:
      return {"DType", "as_dtype()"};
  }
  fail(entry, "signature.params." + p.name + ".type",
       fmt::format("the param type '{}' has no C++ spelling in the generator", p.type.text));
}

std::string literal(const Entry& entry, const ParamDecl& p, const Value& v) {
  const std::string field = "signature.params." + p.name + ".default";
  if (v.is_none()) return p.type.kind == ParamKind::kNumber ? "Value()" : "std::nullopt";
  switch (p.type.kind) {
    case ParamKind::kInt:
      return fmt::format("{}", v.as_int());
    case ParamKind::kFloat:
      return float_repr(v.as_float());
    case ParamKind::kNumber:
      return v.is_int() ? fmt::format("Value(std::int64_t{{{}}})", v.as_int())
                        : fmt::format("Value({})", float_repr(v.as_float()));
    case ParamKind::kBool:
      return v.as_bool() ? "true" : "false";
    case ParamKind::kStr:
    case ParamKind::kEnum:
      return cpp_string(v.as_str());
    case ParamKind::kIntList:
      return int_list_literal(v.as_int_list());
    case ParamKind::kFloatList:
      return float_list_literal(v.as_float_list());
    case ParamKind::kDType:
      return dtype_enumerator(v.as_dtype());
  }
  fail(entry, field, fmt::format("the default {} has no C++ spelling", v.repr()));
}

ParamModel param_model(const Entry& entry, const ParamDecl& p) {
  ParamModel m;
  m.name = p.name;
  check_name(entry, p.origin, "signature.params." + p.name, p.name, true);
  if (p.tensor) {
    m.tensor = true;
    m.optional_tensor = p.tensor->optional;
    m.cpp_type = p.tensor->optional ? "std::optional<Tensor>" : "Tensor";
    if (p.tensor->optional) m.default_expr = "std::nullopt";
    return m;
  }
  const KindSpelling s = spelling(entry, p);
  const std::string read = fmt::format("param(\"{}\")", p.name);
  // An optional number is a Value that may hold None: it needs no std::optional around it.
  const bool wrapped = p.type.optional && p.type.kind != ParamKind::kNumber;
  if (wrapped) {
    m.cpp_type = fmt::format("std::optional<{}>", s.type);
    m.to_value = fmt::format("{0} ? Value(std::move(*{0})) : Value()", p.name);
    m.from_value = fmt::format("ops::optional_param<{}>({})", s.type, read);
  } else {
    m.cpp_type = s.type;
    m.to_value = fmt::format("Value(std::move({}))", p.name);
    m.from_value = s.accessor.empty() ? read : fmt::format("{}.{}", read, s.accessor);
  }
  if (p.default_value) m.default_expr = literal(entry, p, *p.default_value);
  return m;
}

std::string shape_text(const manifest::TensorDecl& t) { return t.shape.source; }

std::vector<std::string> summary(const Entry& entry) {
  std::vector<std::string> lines;
  std::string line = entry.name;
  if (!entry.ref_api.empty()) line += " (" + entry.ref_api + ")";
  if (entry.composition) line += ", a composite op";
  lines.push_back(line);
  for (const auto& t : entry.inputs) {
    std::string l = fmt::format("  input  {}: {} {}", t.name, t.dtype.source, shape_text(t));
    if (t.optional) l += ", optional";
    if (t.mutated) l += ", written";
    if (t.mutated_when) l += ", written when " + t.mutated_when->source;
    lines.push_back(l);
  }
  for (const auto& t : entry.outputs) {
    std::string l = fmt::format("  output {}: {} {}", t.name, t.dtype.source, shape_text(t));
    if (t.buffer_out) l += ", out= accepted";
    if (!t.alias.empty()) l += ", is " + t.alias + " when that is written";
    lines.push_back(l);
  }
  for (const auto& i : entry.forall) {
    if (i.kind != manifest::IndexKind::kDType) continue;
    std::string set;
    for (DType d : i.dtypes) set += (set.empty() ? "" : " | ") + std::string(dtype_name(d));
    lines.push_back(fmt::format("  {} in {}", i.name, set));
  }
  for (const auto& r : entry.shape_rules) lines.push_back("  rule: " + r.source);
  return lines;
}

StageModel stage_model(const Entry& entry, const manifest::Stage& s,
                       const manifest::Manifest& manifest) {
  StageModel m{s.name, s.op, false, {}};
  const std::string field = "composition.stages." + s.name;
  if (!is_identifier(s.name))
    fail(entry, s.origin, field, fmt::format("'{}' is not a C++ identifier", s.name));
  const Entry* sub = manifest.find(s.op);
  if (!sub) fail(entry, s.origin, field + ".op", fmt::format("no manifest entry named {}", s.op));
  if (sub->status != "implemented")
    fail(entry, s.origin, field + ".op",
         fmt::format("{} is {}, so it has no op class", s.op, sub->status));
  if (s.optional) return m;  // held when forward needs it
  bool all_required_given = true;
  for (const ParamDecl& sp : sub->params) {
    const bool parent_has = entry.find_param(sp.name) != nullptr;
    if (parent_has && !sp.tensor) m.params_by_name.push_back(sp.name);
    if (!sp.default_value && !(sp.tensor && sp.tensor->optional) && !parent_has)
      all_required_given = false;
  }
  m.held_at_construction = all_required_given;
  return m;
}

}  // namespace

bool ClassModel::has_tensor_params() const noexcept {
  return std::any_of(params.begin(), params.end(), [](const ParamModel& p) { return p.tensor; });
}

ClassModel class_model(const Entry& entry, const manifest::Manifest& manifest) {
  ClassModel m;
  m.name = entry.name;
  m.family = entry.family;
  m.ref_api = entry.ref_api;
  if (!is_identifier(entry.name)) fail(entry, "name", "the op name is not a C++ identifier");
  if (!is_identifier(entry.family)) fail(entry, "family", "the family is not a C++ identifier");
  m.summary = summary(entry);
  std::vector<ParamModel> with_default;
  for (const ParamDecl& p : entry.params) {
    ParamModel pm = param_model(entry, p);
    (pm.default_expr.empty() ? m.params : with_default).push_back(std::move(pm));
  }
  m.params.insert(m.params.end(), with_default.begin(), with_default.end());
  for (const auto& t : entry.inputs) {
    check_name(entry, t.origin, "signature.inputs." + t.name, t.name, false);
    if (t.name == "options")
      fail(entry, t.origin, "signature.inputs." + t.name,
           "'options' names the call's options argument");
    m.inputs.push_back({t.name, t.optional});
  }
  for (const auto& t : entry.outputs) {
    check_name(entry, t.origin, "signature.outputs." + t.name, t.name, false);
    m.outputs.push_back(t.name);
  }
  for (std::size_t i = 0; i < m.inputs.size(); ++i)
    for (const ParamModel& p : m.params)
      if (p.name == m.inputs[i].name)
        fail(entry, "signature.inputs." + p.name, "an input and a param share this name");
  if (entry.composition)
    for (const manifest::Stage& s : *entry.composition) {
      m.stages.push_back(stage_model(entry, s, manifest));
      // A stage held at construction is the member `<stage>_`, beside the params' `<param>_`.
      if (entry.find_param(s.name))
        fail(entry, s.origin, "composition.stages." + s.name,
             "a stage and a param share this name (both would be the member " + s.name + "_)");
    }
  return m;
}

}  // namespace tileops::codegen
