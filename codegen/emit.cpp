#include "emit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tileops::codegen {
namespace {

// A reference type for the read accessor: small scalars by value, the rest by const reference.
bool by_value(const std::string& type) {
  return type == "std::int64_t" || type == "double" || type == "bool" || type == "DType";
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// `head(items...)tail` laid out in 100 columns: on one line when it fits, else one break after
// each comma that would overflow, the continuation aligned after the parenthesis.
std::string wrapped(const std::string& head, const std::vector<std::string>& items,
                    const std::string& tail) {
  constexpr std::size_t kColumns = 100;
  const std::size_t indent = head.size() - head.rfind('\n') - 1 + 1;  // column after '('
  std::string out = head + "(";
  std::size_t column = indent;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string piece = items[i] + (i + 1 < items.size() ? "," : ")" + tail);
    if (i > 0) {
      if (column + 1 + piece.size() > kColumns) {
        out += "\n" + std::string(indent, ' ');
        column = indent;
      } else {
        out += " ";
        column += 1;
      }
    }
    out += piece;
    column += piece.size();
  }
  if (items.empty()) out += ")" + tail;
  return out;
}

std::string return_type(const ClassModel& c) {
  if (c.outputs.empty()) return "void";
  if (c.outputs.size() == 1) return "Tensor";
  return "Result";
}

// The typed constructor's parameter list; `with_defaults` for the declaration.
std::vector<std::string> typed_params(const ClassModel& c, bool with_defaults) {
  std::vector<std::string> parts;
  for (const ParamModel& p : c.params) {
    std::string s = p.cpp_type + " " + p.name;
    if (with_defaults && !p.default_expr.empty()) s += " = " + p.default_expr;
    parts.push_back(s);
  }
  parts.push_back(std::string("std::optional<Target> target") +
                  (with_defaults ? " = std::nullopt" : ""));
  return parts;
}

std::vector<std::string> call_params(const ClassModel& c, bool with_defaults) {
  std::vector<std::string> parts;
  for (const InputModel& i : c.inputs) {
    if (i.optional)
      parts.push_back("const std::optional<Tensor>& " + i.name +
                      (with_defaults ? " = std::nullopt" : ""));
    else
      parts.push_back("const Tensor& " + i.name);
  }
  parts.push_back(std::string("const CallOptions& options") + (with_defaults ? " = {}" : ""));
  return parts;
}

std::string class_declaration(const FamilySources& f, const ClassModel& c) {
  std::string s;
  for (const std::string& line : c.summary) s += "// " + line + "\n";
  s += fmt::format("class {} final : public Op {{\n public:\n", c.name);
  s += fmt::format("  static constexpr std::string_view kName = \"{}\";\n", c.name);
  s += fmt::format(
      "  // The manifest entry, kernel interfaces and implementations (kernels/{}/impls.cpp).\n",
      f.family);
  s += "  static const OpClass& op_class();\n\n";
  s += wrapped("  explicit " + c.name, typed_params(c, true), ";\n");
  s += "  // The params by name, checked against the manifest (make_op, the CLI and bindings).\n";
  s += fmt::format("  {}(const ParamMap& params, std::optional<Target> target);\n\n", c.name);
  if (c.outputs.size() > 1) {
    s += "  struct Result {\n";
    for (const std::string& o : c.outputs) s += fmt::format("    Tensor {};\n", o);
    s += "  };\n";
  }
  s += wrapped("  " + return_type(c) + " operator()", call_params(c, true), ";\n");
  bool any_accessor = false;
  for (const ParamModel& p : c.params) {
    if (p.tensor) continue;
    if (!any_accessor)
      s += "\n  // The construction params, checked, with their defaults filled in.\n";
    any_accessor = true;
    if (by_value(p.cpp_type))
      s += fmt::format("  {} {}() const noexcept {{ return {}_; }}\n", p.cpp_type, p.name, p.name);
    else
      s += fmt::format("  const {}& {}() const noexcept {{ return {}_; }}\n", p.cpp_type, p.name,
                       p.name);
  }
  s += fmt::format("\n protected:\n  // Written by hand in src/ops/{}/.\n", f.family);
  s += "  CallResult forward(const CallArgs& args) override;\n";
  if (!c.composite()) s += "  KernelCalls kernel_calls(const CallArgs& args) const override;\n";
  std::string members;
  for (const ParamModel& p : c.params)
    if (!p.tensor) members += fmt::format("  {} {}_;\n", p.cpp_type, p.name);
  for (const StageModel& st : c.stages)
    if (st.held_at_construction)
      members +=
          fmt::format("  {}& {}_;  // stage '{}', held at construction\n", st.op, st.name, st.name);
  if (!members.empty()) s += "\n private:\n" + members;
  s += "};\n";
  return s;
}

// The ParamMap the typed constructor builds, one param a line.
// `column`: where "ParamMap{" starts, so that the items align after its brace.
std::string param_map(const ClassModel& c, std::size_t column) {
  std::vector<std::string> items;
  for (const ParamModel& p : c.params)
    if (!p.tensor) items.push_back(fmt::format("{{\"{}\", {}}}", p.name, p.to_value));
  return "ParamMap{" + join(items, ",\n" + std::string(column + 9, ' ')) + "}";
}

std::string class_definitions(const FamilySources& f, const ClassModel& c) {
  std::string s = fmt::format("// ---- {} ----\n\n", c.name);
  // op_class()
  std::string manifest = f.manifest_function.empty() ? "" : ", &" + f.manifest_function + "()";
  std::string cls =
      fmt::format("op_class_from_table(kName, &kernels::{}_implementations{})", f.family, manifest);
  for (const StageModel& st : c.stages)
    cls += fmt::format("\n      .stage<{}>(\"{}\")", st.op, st.name);
  s += fmt::format(
      "const OpClass& {}::op_class() {{\n  static const OpClass cls = {};\n  return cls;\n}}\n\n",
      c.name, cls);
  // The typed constructor delegates to the by-name one. Construction-time tensors travel in the
  // ParamMap as Values, which the by-name constructor hands to Op beside the other params.
  s += wrapped(c.name + "::" + c.name, typed_params(c, false), "\n");
  if (c.has_tensor_params()) {
    s += fmt::format("    : {}([&] {{\n        ParamMap params = {};\n", c.name, param_map(c, 25));
    for (const ParamModel& p : c.params) {
      if (!p.tensor) continue;
      if (p.optional_tensor)
        s += fmt::format("        if ({0}) params.set(\"{0}\", Value(std::move(*{0})));\n", p.name);
      else
        s += fmt::format("        params.set(\"{0}\", Value(std::move({0})));\n", p.name);
    }
    s += "        return params;\n      }(), std::move(target)) {}\n\n";
  } else {
    const std::size_t column = 7 + c.name.size();  // after "    : Name("
    s += fmt::format("    : {}({},\n{}std::move(target)) {{}}\n\n", c.name, param_map(c, column),
                     std::string(column, ' '));
  }
  // The by-name constructor.
  std::vector<std::string> inits;
  if (c.has_tensor_params()) {
    std::vector<std::string> names;
    for (const ParamModel& p : c.params)
      if (p.tensor) names.push_back("\"" + p.name + "\"");
    inits.push_back(
        fmt::format("Op(op_class(), ops::without_tensors(params), std::move(target), "
                    "ops::tensors_of(params, {{{}}}))",
                    join(names, ", ")));
  } else {
    inits.push_back("Op(op_class(), params, std::move(target))");
  }
  for (const ParamModel& p : c.params)
    if (!p.tensor) inits.push_back(fmt::format("{}_({})", p.name, p.from_value));
  for (const StageModel& st : c.stages) {
    if (!st.held_at_construction) continue;
    std::vector<std::string> items;
    for (const std::string& n : st.params_by_name)
      items.push_back(fmt::format("{{\"{0}\", param(\"{0}\")}}", n));
    inits.push_back(
        fmt::format("{}_(delegate_for<{}>(\"{}\", Identity(), nullptr, ParamMap{{{}}}))", st.name,
                    st.op, st.name, join(items, ", ")));
  }
  s += fmt::format(
      "{0}::{0}(const ParamMap& params, std::optional<Target> target)\n    : {1} {{}}\n\n", c.name,
      join(inits, ",\n      "));
  // operator()
  s += wrapped(
      (c.outputs.size() > 1 ? c.name + "::Result" : return_type(c)) + " " + c.name + "::operator()",
      call_params(c, false), " {\n");
  // Borrowed, not copied (Note [Borrowed call inputs] in tileops/core/tensor.hpp).
  std::string inputs = "TensorRefs()";
  if (!c.inputs.empty()) {
    std::vector<std::string> refs;
    for (const InputModel& i : c.inputs)
      refs.push_back(i.optional ? "borrow(" + i.name + ")" : "&" + i.name);
    s += fmt::format("  const Tensor* const call_inputs[] = {{{}}};\n", join(refs, ", "));
    inputs = "call_inputs";
  }
  if (c.outputs.empty()) {
    s += fmt::format("  call_borrowed({}, options);\n", inputs);
  } else if (c.outputs.size() == 1) {
    s += fmt::format("  return ops::first_output(call_borrowed({}, options));\n", inputs);
  } else {
    s += fmt::format("  CallResult result = call_borrowed({}, options);\n  return {{", inputs);
    for (std::size_t o = 0; o < c.outputs.size(); ++o)
      s += fmt::format("{}std::move(*result[{}])", o ? ", " : "", o);
    s += "};\n";
  }
  s += "}\n\n";
  return s;
}

}  // namespace

std::string family_header(const FamilySources& f) {
  std::string s = fmt::format(
      "// Generated by tileops_opgen from {0}: do not edit. The op classes of the {1} family,\n"
      "// derived from their manifest entries: constructors with the manifest's params and "
      "defaults,\n"
      "// the call operator with the inputs in signature order, typed param accessors. Each "
      "class's\n"
      "// forward() and kernel_calls() are written in src/ops/{1}/ (docs/adding-an-op.md).\n"
      "#pragma once\n\n"
      "#include <cstdint>\n#include <optional>\n#include <string>\n#include <string_view>\n"
      "#include <vector>\n\n"
      "#include \"tileops/op/op.hpp\"\n#include \"tileops/ops/defaults.hpp\"\n\n"
      "namespace tileops {{\n\n",
      f.manifest_file, f.family);
  std::vector<std::string> declared;
  for (const ClassModel& c : f.classes)
    for (const StageModel& st : c.stages)
      if (std::find(declared.begin(), declared.end(), st.op) == declared.end()) {
        bool here = false;
        for (const ClassModel& o : f.classes) here = here || o.name == st.op;
        if (!here) {
          s += fmt::format("class {};\n", st.op);
          declared.push_back(st.op);
        }
      }
  if (!declared.empty()) s += "\n";
  // A composite's stage class declared in this family must come first.
  std::vector<const ClassModel*> order;
  for (const ClassModel& c : f.classes)
    if (!c.composite()) order.push_back(&c);
  for (const ClassModel& c : f.classes)
    if (c.composite()) order.push_back(&c);
  for (const ClassModel* c : order) s += class_declaration(f, *c) + "\n";
  s += "}  // namespace tileops\n";
  return s;
}

std::string family_source(const FamilySources& f) {
  std::string s = fmt::format(
      "// Generated by tileops_opgen from {0}: do not edit.\n"
      "#include \"tileops/ops/{1}.hpp\"\n",
      f.manifest_file, f.family);
  for (const std::string& other : f.stage_families)
    if (other != f.family) s += fmt::format("#include \"tileops/ops/{}.hpp\"\n", other);
  s += "\n#include \"ops/op_support.hpp\"\n#include \"tileops/op/implementation_table.hpp\"\n"
       "#include \"tileops/op/registry.hpp\"\n\nnamespace tileops {\n\n";
  if (!f.manifest_function.empty())
    s += fmt::format("const manifest::Manifest& {}();\n\n", f.manifest_function);
  if (!f.classes.empty())
    s += fmt::format(
        "namespace kernels {{\nvoid {0}_implementations(ImplementationTable& table);  // "
        "kernels/{0}/impls.cpp\n}}  // namespace kernels\n\n",
        f.family);
  for (const ClassModel& c : f.classes) s += class_definitions(f, c);
  s += fmt::format("namespace ops {{\n\nvoid register_{}_op_classes() {{\n", f.family);
  for (const ClassModel& c : f.classes) s += fmt::format("  register_op_class<{}>();\n", c.name);
  s += "}\n\n}  // namespace ops\n}  // namespace tileops\n";
  return s;
}

std::string registration_source(const std::vector<std::string>& families) {
  std::string s =
      "// Generated by tileops_opgen: do not edit. Registers the op classes of every family.\n"
      "#include \"ops/registration.hpp\"\n\nnamespace tileops::ops {\n\n";
  for (const std::string& f : families) s += fmt::format("void register_{}_op_classes();\n", f);
  s += "\nvoid register_generated_op_classes() {\n";
  for (const std::string& f : families) s += fmt::format("  register_{}_op_classes();\n", f);
  s += "}\n\n}  // namespace tileops::ops\n";
  return s;
}

std::string umbrella_header(const std::vector<std::string>& families) {
  std::string s =
      "// Generated by tileops_opgen: do not edit. Every op class of the library.\n#pragma "
      "once\n\n";
  for (const std::string& f : families) s += fmt::format("#include \"tileops/ops/{}.hpp\"\n", f);
  return s;
}

}  // namespace tileops::codegen
