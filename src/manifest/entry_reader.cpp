#include "manifest/entry_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "manifest/text_util.hpp"
#include "manifest/yaml_scalar.hpp"
#include "tileops/manifest/param_type.hpp"

namespace tileops::manifest::detail {
namespace {

bool contains_key(std::initializer_list<const char*> keys, const std::string& k) {
  return std::any_of(keys.begin(), keys.end(), [&](const char* a) { return k == a; });
}

bool valid_label(const std::string& s) {
  if (s.empty() || s.size() > 24) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::string join_field(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "." + b;
}

}  // namespace

Origin EntryReader::origin(const YAML::Node& at, const std::string& field) const {
  Origin o{file_, entry_, field, 0, 0};
  if (at.IsDefined() && at.Mark().line >= 0) {
    o.line = at.Mark().line + 1;
    o.column = at.Mark().column + 1;
  }
  return o;
}

Origin EntryReader::key_origin(const YAML::Node& map, const char* key,
                               const std::string& field) const {
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return origin(kv.first, field);
  return Origin{file_, entry_, field, 0, 0};
}

void EntryReader::error_at(const YAML::Mark& mark, const std::string& field,
                           const std::string& what) {
  // The entry's own keys have no field: "<file>:<line>:<column>: <entry>: <what>".
  diags_.push_back(fmt::format("{}:{}:{}: {}: {}{}", file_, mark.line + 1, mark.column + 1, entry_,
                               field.empty() ? "" : field + ": ", what));
}

void EntryReader::error(const YAML::Node& at, const std::string& field, const std::string& what) {
  Origin o = origin(at, field);
  diags_.push_back(fmt::format("{}:{}:{}: {}: {}{}", file_, o.line, o.column, entry_,
                               field.empty() ? "" : field + ": ", what));
}

bool EntryReader::expect_map_any_keys(const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) {
    error(node, field, "expected a mapping");
    return false;
  }
  for (const auto& [key, mark] : duplicate_keys(node))
    error_at(mark, field, fmt::format("duplicate key '{}'", key));
  return true;
}

bool EntryReader::expect_map(const YAML::Node& node, const std::string& field,
                             std::initializer_list<const char*> allowed) {
  if (!expect_map_any_keys(node, field)) return false;
  std::vector<std::pair<std::string, YAML::Mark>> unknown;
  for (const auto& kv : node) {
    std::string k = kv.first.Scalar();
    if (!contains_key(allowed, k)) unknown.emplace_back(k, kv.first.Mark());
  }
  std::sort(unknown.begin(), unknown.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, mark] : unknown) error_at(mark, field, fmt::format("unknown key '{}'", k));
  return true;
}

std::optional<std::string> EntryReader::read_string(const YAML::Node& node,
                                                    const std::string& field) {
  if (!node.IsScalar()) {
    error(node, field, "expected a string");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> EntryReader::read_bool(const YAML::Node& node, const std::string& field) {
  Value v = node.IsScalar() ? resolve_scalar(node) : Value();
  if (!v.is_bool()) {
    error(node, field, "expected true or false");
    return std::nullopt;
  }
  return v.as_bool();
}

std::optional<Expr> EntryReader::read_expr(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    error(node, field, "expected an expression string");
    return std::nullopt;
  }
  Expr e;
  e.source = node.Scalar();
  e.origin = origin(node, field);
  if (node.Tag() == "!") e.origin.column += 1;  // the opening quote
  try {
    e.ast = expr::parse(e.source);
  } catch (const expr::ExprError& err) {
    diags_.push_back(fmt::format("{}:{}:{}: {}: {}: {} in \"{}\"", file_, e.origin.line,
                                 e.origin.column + err.column() - 1, entry_, field, err.detail(),
                                 e.source));
    return std::nullopt;
  }
  return e;
}

std::optional<ShapeDecl> EntryReader::read_shape(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) {
    error(node, field, "expected a shape string such as \"[M, *S]\"");
    return std::nullopt;
  }
  ShapeDecl shape;
  shape.source = node.Scalar();
  shape.origin = origin(node, field);
  if (node.Tag() == "!") shape.origin.column += 1;
  const std::string& s = shape.source;
  std::size_t open = s.find_first_not_of(' ');
  std::size_t close = s.find_last_not_of(' ');
  if (open == std::string::npos || s[open] != '[' || s[close] != ']') {
    error(node, field, fmt::format("a shape is written \"[axis, ...]\", not \"{}\"", s));
    return std::nullopt;
  }
  std::string inner = s.substr(open + 1, close - open - 1);
  if (trim(inner).empty()) return shape;  // rank 0
  bool ok = true;
  for (const Piece& piece : split_pieces(inner, ',')) {
    std::string text = trim(piece.text);
    int lead = static_cast<int>(piece.text.find_first_not_of(' '));
    int column =
        shape.origin.column + static_cast<int>(open) + 1 + piece.offset + std::max(lead, 0);
    if (text.empty()) {
      diags_.push_back(fmt::format("{}:{}:{}: {}: {}: empty axis in \"{}\"", file_,
                                   shape.origin.line, column, entry_, field, s));
      ok = false;
      continue;
    }
    AxisTerm term;
    if (text[0] == '*') {
      term.splice = true;
      text = trim(text.substr(1));
      column += 1;
    }
    term.expr.source = text;
    term.expr.origin = shape.origin;
    term.expr.origin.column = column;
    try {
      term.expr.ast = expr::parse(text);
    } catch (const expr::ExprError& err) {
      diags_.push_back(fmt::format("{}:{}:{}: {}: {}: {} in \"{}\"", file_, shape.origin.line,
                                   column + err.column() - 1, entry_, field, err.detail(), s));
      ok = false;
      continue;
    }
    shape.axes.push_back(std::move(term));
  }
  if (!ok) return std::nullopt;
  return shape;
}

Entry EntryReader::read(const YAML::Node& node) {
  Entry e;
  e.name = entry_;
  e.file = file_;
  if (!expect_map(
          node, "",
          {"family", "status", "ref_api", "signature", "workloads", "roofline", "composition"}))
    return e;
  for (const char* required : {"family", "status", "signature", "workloads", "roofline"}) {
    if (!node[required]) error(node, required, "is required");
  }
  if (node["family"]) {
    e.family = read_string(node["family"], "family").value_or("");
    e.origins.family = origin(node["family"], "family");
  }
  e.origins.signature = key_origin(node, "signature", "signature");
  e.origins.workloads = key_origin(node, "workloads", "workloads");
  if (node["status"]) {
    e.status = read_string(node["status"], "status").value_or("");
    if (!e.status.empty() && e.status != "implemented" && e.status != "spec-only")
      error(node["status"], "status",
            fmt::format("is 'implemented' or 'spec-only', not '{}'", e.status));
  }
  if (node["ref_api"]) e.ref_api = read_string(node["ref_api"], "ref_api").value_or("");
  if (node["signature"]) read_signature(node["signature"], e);
  if (node["workloads"]) read_workloads(node["workloads"], e);
  if (node["roofline"]) read_roofline(node["roofline"], e);
  if (node["composition"]) read_composition(node["composition"], e);
  return e;
}

void EntryReader::read_signature(const YAML::Node& node, Entry& e) {
  if (!expect_map(node, "signature",
                  {"forall", "params", "inputs", "outputs", "let", "shape_rules", "dtype_combos"}))
    return;
  e.origins.params = key_origin(node, "params", "signature.params");
  e.origins.inputs = key_origin(node, "inputs", "signature.inputs");
  if (node["forall"]) read_forall(node["forall"], e);
  if (node["params"]) read_params(node["params"], e);
  for (const char* group : {"inputs", "outputs"}) {
    const YAML::Node g = node[group];
    if (!g) continue;
    std::string field = fmt::format("signature.{}", group);
    if (g.IsMap() && g.size() == 0) continue;
    if (!expect_map_any_keys(g, field)) continue;
    bool is_output = std::string(group) == "outputs";
    for (const auto& kv : g) {
      std::string name = kv.first.Scalar();
      auto t = read_tensor(name, kv.second, join_field(field, name), is_output, false);
      if (t && !is_output && kv.second["values"])
        read_values_hint(kv.second["values"], join_field(field, name) + ".values", e, *t);
      if (t) (is_output ? e.outputs : e.inputs).push_back(std::move(*t));
    }
  }
  if (const YAML::Node lets = node["let"]) {
    if (expect_map_any_keys(lets, "signature.let")) {
      for (const auto& kv : lets) {
        std::string name = kv.first.Scalar();
        if (auto ex = read_expr(kv.second, "signature.let." + name))
          e.lets.push_back({name, std::move(*ex)});
      }
    }
  }
  if (const YAML::Node rules = node["shape_rules"]) {
    if (!rules.IsSequence()) {
      error(rules, "signature.shape_rules", "expected a list of expressions");
    } else {
      for (std::size_t i = 0; i < rules.size(); ++i) {
        if (auto ex = read_expr(rules[i], fmt::format("signature.shape_rules[{}]", i)))
          e.shape_rules.push_back(std::move(*ex));
      }
    }
  }
  if (node["dtype_combos"]) read_dtype_combos(node["dtype_combos"], e);
}

void EntryReader::read_forall(const YAML::Node& node, Entry& e) {
  if (!expect_map_any_keys(node, "signature.forall")) return;
  for (const auto& kv : node) {
    std::string name = kv.first.Scalar();
    std::string field = "signature.forall." + name;
    auto kind = read_string(kv.second, field);
    if (!kind) continue;
    IndexDecl idx{name, IndexKind::kDim, {}, origin(kv.second, field)};
    std::string k = trim(*kind);
    if (k == "Dim") {
      idx.kind = IndexKind::kDim;
    } else if (k == "Shape") {
      idx.kind = IndexKind::kShape;
    } else if (k == "Seq[Int]") {
      idx.kind = IndexKind::kSeqInt;
    } else if (k.rfind("DType[", 0) == 0 && k.back() == ']') {
      idx.kind = IndexKind::kDType;
      for (const std::string& part : split_top_level(k.substr(6, k.size() - 7), '|')) {
        auto d = parse_dtype(trim(part));
        if (!d) {
          error(kv.second, field, fmt::format("'{}' is not a dtype", trim(part)));
        } else {
          idx.dtypes.push_back(*d);
        }
      }
      // The index stays declared with the dtypes that parse, so that its uses report nothing more.
    } else {
      error(kv.second, field,
            fmt::format("kind is Dim, Shape, Seq[Int] or DType[...], not '{}'", k));
      continue;
    }
    e.forall.push_back(std::move(idx));
  }
}

void EntryReader::read_params(const YAML::Node& node, Entry& e) {
  if (!expect_map_any_keys(node, "signature.params")) return;
  for (const auto& kv : node) {
    std::string name = kv.first.Scalar();
    std::string field = "signature.params." + name;
    const YAML::Node p = kv.second;
    if (p.IsMap() && p["dtype"] && p["shape"]) {  // a construction-time tensor
      auto t = read_tensor(name, p, field, false, true);
      if (!t) continue;
      ParamDecl decl;
      decl.name = name;
      decl.origin = t->origin;
      decl.tensor = std::move(*t);
      e.params.push_back(std::move(decl));
      continue;
    }
    if (!expect_map(p, field, {"type", "default", "kw_only"})) continue;
    if (!p["type"]) {
      error(p, field + ".type", "is required");
      continue;
    }
    auto text = read_string(p["type"], field + ".type");
    if (!text) continue;
    auto type = parse_param_type(*text);
    if (!type) {
      error(p["type"], field + ".type", fmt::format("'{}' is not a param type", *text));
      continue;
    }
    ParamDecl decl{name, *type, std::nullopt, false, std::nullopt, origin(p, field)};
    if (p["default"]) {
      Value raw = node_to_value(p["default"]);
      auto conformed = conform_param_value(*type, raw);
      if (!conformed) {
        error(p["default"], field + ".default",
              fmt::format("{} is not {}", raw.repr(), with_article(type->text)));
        continue;
      }
      decl.default_value = *conformed;
    }
    if (p["kw_only"]) decl.kw_only = read_bool(p["kw_only"], field + ".kw_only").value_or(false);
    e.params.push_back(std::move(decl));
  }
}

void EntryReader::read_values_hint(const YAML::Node& node, const std::string& field, const Entry& e,
                                   TensorDecl& t) {
  const std::optional<std::string> text = read_string(node, field);
  if (!text) return;
  const std::string hint = trim(*text);
  constexpr std::string_view kForm = "group_ends(";
  if (hint.rfind(kForm, 0) != 0 || hint.back() != ')') {
    error(node, field, fmt::format("the only hint is group_ends(<Dim>), not '{}'", hint));
    return;
  }
  const std::string dim = trim(hint.substr(kForm.size(), hint.size() - kForm.size() - 1));
  const IndexDecl* index = e.find_index(dim);
  if (!index || index->kind != IndexKind::kDim) {
    error(node, field,
          fmt::format("group_ends reads a Dim of signature.forall; '{}' is not one", dim));
    return;
  }
  // Group ends are row indices: the dtype must be an int one, named or a DType index of ints.
  const std::string dtype = trim(t.dtype.source);
  std::vector<DType> dtypes;
  if (auto d = parse_dtype(dtype)) dtypes.push_back(*d);
  if (const IndexDecl* di = e.find_index(dtype); di && di->kind == IndexKind::kDType)
    dtypes = di->dtypes;
  const bool ints = !dtypes.empty() && std::all_of(dtypes.begin(), dtypes.end(), [](DType d) {
    return dtype_category(d) == DTypeCategory::kInt;
  });
  if (!ints) {
    error(node, field,
          fmt::format("group_ends needs an int dtype (int32 or int64), and dtype is '{}'", dtype));
    return;
  }
  t.group_ends = dim;
}

std::optional<TensorDecl> EntryReader::read_tensor(const std::string& name, const YAML::Node& node,
                                                   const std::string& field, bool is_output,
                                                   bool is_param) {
  bool ok = is_output ? expect_map(node, field, {"dtype", "shape", "buffer", "alias", "contiguous"})
            : is_param
                ? expect_map(node, field, {"dtype", "shape", "optional", "device", "contiguous"})
                : expect_map(node, field,
                             {"dtype", "shape", "optional", "mutated", "write_only", "device",
                              "contiguous", "values"});
  if (!ok) return std::nullopt;
  TensorDecl t;
  t.name = name;
  t.origin = origin(node, field);
  for (const char* required : {"dtype", "shape"}) {
    if (!node[required]) {
      error(node, field + "." + required, "is required");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  auto dtype = read_expr(node["dtype"], field + ".dtype");
  auto shape = read_shape(node["shape"], field + ".shape");
  if (!dtype || !shape) return std::nullopt;
  t.dtype = std::move(*dtype);
  t.shape = std::move(*shape);
  if (node["optional"])
    t.optional = read_bool(node["optional"], field + ".optional").value_or(false);
  if (node["mutated"]) {
    Value v = node["mutated"].IsScalar() ? resolve_scalar(node["mutated"]) : Value();
    if (v.is_bool()) {
      t.mutated = v.as_bool();
    } else if (auto ex = read_expr(node["mutated"], field + ".mutated")) {
      t.mutated_when = std::move(*ex);
    } else {
      return std::nullopt;
    }
  }
  if (node["write_only"])
    t.write_only = read_bool(node["write_only"], field + ".write_only").value_or(false);
  if (node["contiguous"])
    t.contiguous = read_bool(node["contiguous"], field + ".contiguous").value_or(false);
  if (node["device"]) {
    auto d = read_string(node["device"], field + ".device");
    if (d && *d != "cpu") {
      error(node["device"], field + ".device",
            fmt::format("the only device a tensor may declare is cpu, not '{}'", *d));
      return std::nullopt;
    }
    t.cpu_only = d.has_value();
  }
  if (node["buffer"]) {
    auto b = read_string(node["buffer"], field + ".buffer");
    if (b && *b != "out") {
      error(node["buffer"], field + ".buffer", fmt::format("the only buffer is out, not '{}'", *b));
      return std::nullopt;
    }
    t.buffer_out = b.has_value();
  }
  if (node["alias"]) t.alias = read_string(node["alias"], field + ".alias").value_or("");
  return t;
}

std::vector<std::pair<std::string, DType>> EntryReader::read_dtype_row(const YAML::Node& node,
                                                                       const std::string& field) {
  std::vector<std::pair<std::string, DType>> row;
  if (!expect_map_any_keys(node, field)) return row;
  for (const auto& kv : node) {
    std::string key = kv.first.Scalar();
    auto text = read_string(kv.second, field + "." + key);
    if (!text) continue;
    auto d = parse_dtype(*text);
    if (!d) {
      error(kv.second, field + "." + key, fmt::format("'{}' is not a dtype", *text));
      continue;
    }
    row.emplace_back(key, *d);
  }
  return row;
}

void EntryReader::read_dtype_combos(const YAML::Node& node, Entry& e) {
  if (!node.IsSequence()) {
    error(node, "signature.dtype_combos", "expected a list of rows");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string field = fmt::format("signature.dtype_combos[{}]", i);
    e.dtype_combos.push_back(read_dtype_row(node[i], field));
    e.origins.dtype_combos.push_back(origin(node[i], field));
  }
}

void EntryReader::read_workloads(const YAML::Node& node, Entry& e) {
  if (!node.IsSequence() || node.size() == 0) {
    error(node, "workloads", "expected a non-empty list of rows");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string field = fmt::format("workloads[{}]", i);
    const YAML::Node row = node[i];
    if (!expect_map_any_keys(row, field)) continue;
    WorkloadRow w;
    w.origin = origin(row, field);
    for (const auto& kv : row) {
      std::string key = kv.first.Scalar();
      std::string kf = field + "." + key;
      if (key == "label") {
        w.label = read_string(kv.second, kf).value_or("");
        if (!valid_label(w.label))
          error(kv.second, kf,
                fmt::format("'{}' is not a label ([A-Za-z0-9._-], 1 to 24 characters)", w.label));
      } else if (key == "some") {
        if (!kv.second.IsSequence()) {
          error(kv.second, kf, "expected a list of optional input names");
          continue;
        }
        for (const auto& n : kv.second) w.some.push_back(n.Scalar());
      } else if (key == "dtype_cases") {
        if (!kv.second.IsSequence() || kv.second.size() == 0) {
          error(kv.second, kf, "expected a non-empty list of dtype assignments");
          continue;
        }
        for (std::size_t j = 0; j < kv.second.size(); ++j)
          w.dtype_cases.push_back(read_dtype_row(kv.second[j], fmt::format("{}[{}]", kf, j)));
      } else if (const ParamDecl* p = e.find_param(key); p && !p->tensor) {
        Value raw = node_to_value(kv.second);
        auto conformed = conform_param_value(p->type, raw);
        if (!conformed) {
          error(kv.second, kf, fmt::format("{} is not {}", raw.repr(), with_article(p->type.text)));
          continue;
        }
        w.params.set(key, *conformed);
      } else if (e.find_index(key)) {
        w.indices.emplace_back(key, node_to_value(kv.second));
      } else {
        error_at(kv.first.Mark(), field,
                 fmt::format("unknown key '{}': not a param or index of {}", key, e.name));
      }
    }
    if (w.label.empty() && !row["label"]) error(row, field + ".label", "is required");
    e.workloads.push_back(std::move(w));
  }
}

void EntryReader::read_roofline(const YAML::Node& node, Entry& e) {
  if (!expect_map(node, "roofline", {"flops", "bytes"})) return;
  if (!node["flops"]) {
    error(node, "roofline.flops", "is required");
    return;
  }
  if (auto f = read_expr(node["flops"], "roofline.flops")) e.roofline.flops = std::move(*f);
  if (node["bytes"]) e.roofline.bytes = read_expr(node["bytes"], "roofline.bytes");
}

void EntryReader::read_composition(const YAML::Node& node, Entry& e) {
  if (!expect_map(node, "composition", {"stages"})) return;
  const YAML::Node stages = node["stages"];
  if (!stages || !stages.IsSequence() || stages.size() == 0) {
    error(node, "composition.stages", "expected a non-empty list of stages");
    return;
  }
  std::vector<Stage> out;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::string field = fmt::format("composition.stages[{}]", i);
    if (!expect_map(stages[i], field, {"name", "op", "optional"})) continue;
    Stage s;
    s.origin = origin(stages[i], field);
    if (!stages[i]["name"] || !stages[i]["op"]) {
      error(stages[i], field, "a stage needs name and op");
      continue;
    }
    s.name = read_string(stages[i]["name"], field + ".name").value_or("");
    s.op = read_string(stages[i]["op"], field + ".op").value_or("");
    if (stages[i]["optional"])
      s.optional = read_bool(stages[i]["optional"], field + ".optional").value_or(false);
    out.push_back(std::move(s));
  }
  e.composition = std::move(out);
}

}  // namespace tileops::manifest::detail
