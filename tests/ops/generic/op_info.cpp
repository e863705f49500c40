#include "op_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "tileops/core/error.hpp"
#include "tileops/manifest/expr.hpp"
#include "tileops/manifest/manifest.hpp"
#include "workload_cases.hpp"

namespace tileops::generic {
namespace {

using manifest::Entry;
using manifest::WorkloadRow;

bool passes(const Entry& e, const WorkloadRow& row, std::size_t i) {
  const manifest::TensorDecl& t = e.inputs[i];
  return !t.optional || std::find(row.some.begin(), row.some.end(), t.name) != row.some.end();
}

// The name an axis term is when it is a bare name ("B" in `*B`, "N"), else "".
std::string bare_name(const manifest::AxisTerm& term) {
  const auto& ast = term.expr.ast;
  return ast && ast->op == expr::AstOp::kName ? ast->text : std::string();
}

const Value* index_value(const WorkloadRow& row, std::string_view name) {
  for (const auto& [n, v] : row.indices)
    if (n == name) return &v;
  return nullptr;
}

// Sets axis `axis` of the Shape index `n` of `row` to `value`, and the same axis of every Shape
// index of the same rank that has the same length there: shapes that must agree (a and b of an
// add) keep agreeing, and a broadcast partner of length 1 stays 1.
void set_axis(WorkloadRow& row, std::size_t n, std::size_t axis, std::int64_t value) {
  const Shape original = row.indices[n].second.as_int_list();
  for (auto& [name, v] : row.indices) {
    if (!v.is_int_list() || v.as_int_list().size() != original.size()) continue;
    Shape s = v.as_int_list();
    if (s[axis] != original[axis]) continue;
    s[axis] = value;
    v = Value(std::move(s));
  }
}

// Int params that are a whole axis of some tensor (`[num_heads, seq_len, seq_len]`).
std::vector<std::string> axis_params(const Entry& e) {
  std::vector<std::string> names;
  for (const auto* decls : {&e.inputs, &e.outputs})
    for (const manifest::TensorDecl& t : *decls)
      for (const manifest::AxisTerm& term : t.shape.axes) {
        const manifest::ParamDecl* p = e.find_param(bare_name(term));
        if (!term.splice && p && p->type.kind == manifest::ParamKind::kInt &&
            std::find(names.begin(), names.end(), p->name) == names.end())
          names.push_back(p->name);
      }
  return names;
}

bool has_empty_tensor(const Case& c, const std::vector<TensorSpec>& outputs) {
  for (const auto& spec : c.wcase.inputs)
    if (spec && spec->shape.numel() == 0) return true;
  for (const TensorSpec& out : outputs)
    if (out.shape.numel() == 0) return true;
  return false;
}

}  // namespace

std::string Case::str(const Entry& entry) const {
  std::string inputs;
  for (std::size_t i = 0; i < wcase.inputs.size(); ++i)
    if (const auto& spec = wcase.inputs[i])
      inputs += fmt::format("{}{} {} {}", inputs.empty() ? "" : ", ", entry.inputs[i].name,
                            dtype_name(spec->dtype), spec->shape.str());
  return fmt::format("{} ({}; params {})", wcase.id, inputs.empty() ? "no tensor input" : inputs,
                     wcase.params.repr());
}

OpInfo::OpInfo(std::shared_ptr<const manifest::Entry> entry)
    : entry_(std::move(entry)), plan_(workloads::plan_of(entry_)) {}

int OpInfo::buffer_output() const noexcept {
  for (std::size_t o = 0; o < entry_->outputs.size(); ++o)
    if (entry_->outputs[o].buffer_out) return static_cast<int>(o);
  return -1;
}

const manifest::ParamDecl* OpInfo::device_param() const noexcept {
  const manifest::ParamDecl* p = entry_->find_param("device");
  return !has_tensor_input() && p && p->type.kind == manifest::ParamKind::kStr ? p : nullptr;
}

Case OpInfo::make_case(const WorkloadRow& row, std::size_t k) const {
  std::vector<manifest::WorkloadCase> cases = manifest::instantiate_workload(*plan_, row);
  Case c{row, std::move(cases.at(k))};
  if (!row.dtype_cases.empty()) c.row.dtype_cases = {row.dtype_cases.at(k)};
  workloads::retarget_device_param(c.wcase, Device::cpu());
  return c;
}

std::vector<Case> OpInfo::numerics_cases(const WorkloadRow& row) const {
  std::vector<Case> cases;
  std::vector<workloads::ScaledCase> scaled = workloads::scaled_cases(*plan_, row, kNumericsElems);
  for (std::size_t k = 0; k < scaled.size(); ++k) {
    Case c{scaled[k].scaled_row, std::move(scaled[k].wcase)};
    if (!row.dtype_cases.empty()) c.row.dtype_cases = {row.dtype_cases.at(k)};
    workloads::retarget_device_param(c.wcase, Device::cpu());
    cases.push_back(std::move(c));
  }
  return cases;
}

std::optional<Case> OpInfo::base_case(const std::vector<std::size_t>& needed) const {
  const WorkloadRow* best = nullptr;
  std::size_t best_count = 0;
  for (const WorkloadRow& row : entry_->workloads) {
    bool ok = true;
    for (std::size_t i : needed) ok = ok && passes(*entry_, row, i);
    std::size_t count = 0;
    for (std::size_t i = 0; i < entry_->inputs.size(); ++i) count += passes(*entry_, row, i);
    if (ok && (!best || count > best_count)) {
      best = &row;
      best_count = count;
    }
  }
  if (!best) return std::nullopt;
  std::vector<workloads::ScaledCase> scaled = workloads::scaled_cases(*plan_, *best, kSmallElems);
  return make_case(scaled.at(0).scaled_row, 0);
}

std::optional<Case> OpInfo::first_accepted(const std::vector<WorkloadRow>& rows) const {
  for (const WorkloadRow& row : rows) {
    try {
      Case c = make_case(row, 0);
      if (accepts(c)) return c;
    } catch (const Error&) {
      // The row does not instantiate (a shape rule refuses it): try the next.
    }
  }
  return std::nullopt;
}

std::optional<Case> OpInfo::second_case(const Case& base) const {
  // Longer shapes: each index in turn, its leading axis (a Shape) or itself (a Dim) one longer.
  std::vector<WorkloadRow> grown;
  for (std::size_t n = 0; n < base.row.indices.size(); ++n) {
    const Value& v = base.row.indices[n].second;
    WorkloadRow row = base.row;
    if (v.is_int_list() && !v.as_int_list().empty())
      set_axis(row, n, 0, v.as_int_list()[0] + 1);
    else if (v.is_int())
      row.indices[n].second = Value(v.as_int() + 1);
    else
      continue;
    grown.push_back(std::move(row));
  }
  // Other dtypes: each DType index in turn set to another dtype of its set, in declaration order.
  std::vector<std::vector<std::pair<std::string, DType>>> dtype_cases;
  if (!base.row.dtype_cases.empty()) {
    const auto& current = base.row.dtype_cases[0];
    for (std::size_t k = 0; k < current.size(); ++k)
      for (DType d : entry_->find_index(current[k].first)->dtypes)
        if (d != current[k].second) {
          dtype_cases.push_back(current);
          dtype_cases.back()[k].second = d;
        }
  }
  std::vector<WorkloadRow> rows;
  for (const WorkloadRow& row : grown) {
    if (dtype_cases.empty()) rows.push_back(row);
    for (const auto& dtypes : dtype_cases) {
      rows.push_back(row);
      rows.back().dtype_cases = {dtypes};
    }
  }
  return first_accepted(rows);
}

std::optional<Case> OpInfo::empty_case(const Case& base) const {
  std::vector<WorkloadRow> rows;
  for (std::size_t n = 0; n < base.row.indices.size(); ++n) {
    const Value& v = base.row.indices[n].second;
    if (v.is_int_list()) {
      for (std::size_t a = 0; a < v.as_int_list().size(); ++a) {
        rows.push_back(base.row);
        set_axis(rows.back(), n, a, 0);
      }
    } else if (v.is_int()) {
      rows.push_back(base.row);
      rows.back().indices[n].second = Value(0);
    }
  }
  for (const std::string& p : axis_params(*entry_)) {
    rows.push_back(base.row);
    rows.back().params.set(p, Value(0));
  }
  for (const WorkloadRow& row : rows) {
    std::optional<Case> c = first_accepted({row});
    if (c && has_empty_tensor(*c, outputs_of(*c))) return c;
  }
  return std::nullopt;
}

std::optional<Shape> OpInfo::wrong_rank_shape(const Case& c, std::size_t i) const {
  const manifest::TensorDecl& t = entry_->inputs[i];
  const ParamMap params = params_of(c);
  std::size_t fixed = 0;
  bool free = false;
  for (const manifest::AxisTerm& term : t.shape.axes) {
    if (!term.splice) {
      ++fixed;
      continue;
    }
    const std::string n = bare_name(term);
    if (entry_->find_index(n)) {
      free = true;  // a Shape index: any length, unless another tensor fixes it
    } else if (const Value* v = params.find(n); v && v->is_int_list()) {
      fixed += v->as_int_list().size();
    } else {
      return std::nullopt;  // a spliced expression
    }
  }
  const Shape& shape = c.wcase.inputs.at(i)->shape;
  if (!free) {
    Shape s{1};
    s.append(shape);
    return s;
  }
  if (fixed == 0) return std::nullopt;
  return Shape(std::span<const std::int64_t>(shape.data() + shape.size() - (fixed - 1), fixed - 1));
}

std::optional<std::vector<std::size_t>> OpInfo::axes_of(const Case& c, std::size_t i,
                                                        std::string_view name) const {
  const ParamMap params = params_of(c);
  std::vector<std::size_t> axes;
  std::size_t pos = 0;
  for (const manifest::AxisTerm& term : entry_->inputs[i].shape.axes) {
    const std::string n = bare_name(term);
    std::size_t length = 1;
    if (term.splice) {
      const Value* v = index_value(c.row, n);
      if (!v) v = params.find(n);
      if (n.empty() || !v || !v->is_int_list()) return std::nullopt;
      length = v->as_int_list().size();
    }
    if (n == name)
      for (std::size_t k = 0; k < length; ++k) axes.push_back(pos + k);
    pos += length;
  }
  return axes;
}

std::vector<SharedName> OpInfo::shared_names() const {
  std::vector<SharedName> names;
  for (std::size_t i = 0; i < entry_->inputs.size(); ++i)
    for (const manifest::AxisTerm& term : entry_->inputs[i].shape.axes) {
      const std::string n = bare_name(term);
      if (n.empty()) continue;
      auto it = std::find_if(names.begin(), names.end(),
                             [&](const SharedName& s) { return s.name == n; });
      if (it == names.end())
        it = names.insert(names.end(), SharedName{n, (term.splice ? "*" : "") + n, {}});
      if (std::find(it->inputs.begin(), it->inputs.end(), i) == it->inputs.end())
        it->inputs.push_back(i);
    }
  std::erase_if(names, [&](const SharedName& s) {
    return !(entry_->find_param(s.name) || (entry_->find_index(s.name) && s.inputs.size() >= 2));
  });
  return names;
}

std::optional<std::vector<DType>> OpInfo::allowed_dtypes(const Case& c, std::size_t i) const {
  const std::string& source = entry_->inputs[i].dtype.source;
  if (const manifest::IndexDecl* idx = entry_->find_index(source);
      idx && idx->kind == manifest::IndexKind::kDType)
    return idx->dtypes;
  if (std::optional<DType> d = parse_dtype(source)) return std::vector<DType>{*d};
  if (const Value* v = params_of(c).find(source); v && v->is_dtype())
    return std::vector<DType>{v->as_dtype()};
  return std::nullopt;
}

std::vector<TensorSpec> OpInfo::outputs_of(const Case& c) const {
  return workloads::infer_outputs(*plan_, c.wcase);
}

bool OpInfo::accepts(const Case& c) const {
  try {
    outputs_of(c);
    return true;
  } catch (const Error&) {
    return false;
  }
}

ParamMap OpInfo::params_of(const Case& c) const {
  return plan_->params_of(plan_->construct(c.wcase.params));
}

std::vector<std::shared_ptr<const manifest::Entry>> implemented_entries() {
  std::vector<std::shared_ptr<const manifest::Entry>> entries;
  for (const auto& e : manifest::Manifest::builtin().entries())
    if (e->status == "implemented") entries.push_back(e);
  return entries;
}

std::string test_name_part(std::string_view text) {
  std::string part(text);
  for (char& ch : part)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  return part;
}

}  // namespace tileops::generic
