#include "tileops/manifest/workload.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "manifest/plan_exec.hpp"
#include "manifest/plan_internal.hpp"
#include "tileops/core/error.hpp"

namespace tileops::manifest {

using detail::PlanData;

namespace {

Value index_value(const IndexDecl& idx, const Value& v) {
  if (idx.kind == IndexKind::kDim) return v;
  if (v.is_tuple() && v.as_tuple().empty()) return Value(Shape{});
  return v;
}

}  // namespace

std::vector<WorkloadCase> instantiate_workload(const SignaturePlan& plan, const WorkloadRow& row) {
  const PlanData& d = plan.data();
  const Entry& e = plan.entry();
  ConstructionState state = plan.construct(row.params);
  std::vector<Value> base = state.frame;
  for (const auto& [name, value] : row.indices) {
    const IndexDecl* idx = e.find_index(name);
    base[d.scope.find(name)->slot] = index_value(*idx, value);
  }
  std::vector<std::vector<std::pair<std::string, DType>>> cases = row.dtype_cases;
  if (cases.empty()) cases.emplace_back();
  std::vector<WorkloadCase> out;
  for (const auto& dtype_case : cases) {
    std::vector<Value> frame = base;
    WorkloadCase c;
    c.id = row.label;
    for (const IndexDecl& idx : e.forall) {
      for (const auto& [name, dt] : dtype_case) {
        if (name != idx.name) continue;
        frame[d.scope.find(name)->slot] = Value(dt);
        c.id += "-" + std::string(dtype_name(dt));
      }
    }
    for (const ParamDecl& p : e.params) {
      if (!p.tensor && p.type.kind == ParamKind::kDType) {
        const Value& v = frame[d.scope.find(p.name)->slot];
        if (v.is_dtype()) c.id += "-" + std::string(dtype_name(v.as_dtype()));
      }
    }
    c.params = row.params;
    for (int i = 0; i < d.num_inputs; ++i) {
      const auto& t = d.input(i);
      bool passed = !t.decl->optional ||
                    std::find(row.some.begin(), row.some.end(), t.decl->name) != row.some.end();
      c.group_ends.emplace_back(std::nullopt);
      if (!passed) {
        c.inputs.emplace_back(std::nullopt);
        continue;
      }
      if (!t.decl->group_ends.empty())
        c.group_ends.back() = frame[d.scope.find(t.decl->group_ends)->slot].as_int();
      TensorSpec spec;
      for (std::size_t k = 0; k < t.axes.size(); ++k) {
        for (int slot : t.axes[k].reads())
          if (frame[slot].is_none() && d.scope.entries()[slot].role != expr::NameRole::kTensor)
            throw CheckError(
                fmt::format("{}: workload '{}' gives no value for '{}', which {}.shape reads",
                            d.op_name, row.label, d.scope.entries()[slot].name, t.decl->name));
        Value v = detail::eval_checked(d, t.axes[k], frame, {t.decl->name, "shape"});
        if (t.decl->shape.axes[k].splice)
          spec.shape.append(v.as_int_list());
        else
          spec.shape.push_back(v.as_int());
      }
      for (int slot : t.dtype.reads())
        if (frame[slot].is_none())
          throw CheckError(
              fmt::format("{}: workload '{}' gives no dtype for '{}', which {}.dtype reads",
                          d.op_name, row.label, d.scope.entries()[slot].name, t.decl->name));
      spec.dtype = detail::eval_checked(d, t.dtype, frame, {t.decl->name, "dtype"}).as_dtype();
      c.inputs.emplace_back(std::move(spec));
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tileops::manifest
