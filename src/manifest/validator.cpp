#include "tileops/manifest/validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "manifest/plan_internal.hpp"
#include "manifest/text_util.hpp"
#include "tileops/core/error.hpp"
#include "tileops/manifest/embedded.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/manifest/workload.hpp"

namespace tileops::manifest {
namespace {

const Origin kUnknown{};

class EntryValidator {
 public:
  EntryValidator(const Manifest& m, const std::shared_ptr<const Entry>& e,
                 std::vector<std::string>& out)
      : m_(m), e_(*e), entry_ptr_(e), out_(out) {}

  void run() {
    check_family();
    combos_ok_ = check_combos();
    check_composition();
    std::shared_ptr<const SignaturePlan> plan;
    try {
      plan = SignaturePlan::build(entry_ptr_);
    } catch (const ManifestError& err) {
      out_.push_back(err.what());
      return;
    }
    check_workloads(*plan);
  }

 private:
  void report(const std::string& field, const std::string& what) {
    out_.push_back(fmt::format("{}: {}: {}: {}", e_.file, e_.name, field, what));
  }
  // As report(), at the line and column of the declaration `at` when the loader knew it.
  void report(const Origin& at, const std::string& field, const std::string& what) {
    if (at.line == 0) return report(field, what);
    out_.push_back(
        fmt::format("{}:{}:{}: {}: {}: {}", e_.file, at.line, at.column, e_.name, field, what));
  }

  void check_family() {
    if (!detail::is_snake_case(e_.family))
      report(e_.origins.family, "family",
             fmt::format("'{}' is not a snake_case family name", e_.family));
  }

  // Reports each malformed dtype_combos row; false when there was one.
  bool check_combos() {
    const std::size_t before = out_.size();
    std::set<std::string> rows;
    std::vector<std::string> first_keys;
    for (std::size_t i = 0; i < e_.dtype_combos.size(); ++i) {
      std::string field = fmt::format("signature.dtype_combos[{}]", i);
      const Origin& at = i < e_.origins.dtype_combos.size() ? e_.origins.dtype_combos[i] : kUnknown;
      std::vector<std::string> keys;
      std::string text;
      for (const auto& [name, dt] : e_.dtype_combos[i]) {
        keys.push_back(name);
        text += name + "=" + std::string(dtype_name(dt)) + ";";
        const IndexDecl* idx = e_.find_index(name);
        const ParamDecl* p = e_.find_param(name);
        const std::vector<DType>* allowed = nullptr;
        if (idx && idx->kind == IndexKind::kDType)
          allowed = &idx->dtypes;
        else if (p && !p->tensor && p->type.kind == ParamKind::kDType)
          allowed = &p->type.dtypes;
        else {
          report(at, field, fmt::format("'{}' is not a DType index or a dtype param", name));
          continue;
        }
        if (!allowed->empty() && std::find(allowed->begin(), allowed->end(), dt) == allowed->end())
          report(at, field, fmt::format("{} is not a dtype '{}' takes", dtype_name(dt), name));
      }
      if (i == 0)
        first_keys = keys;
      else if (keys != first_keys)
        report(at, field, "every row names the same columns as the first");
      if (!rows.insert(text).second) report(at, field, "repeats an earlier row");
    }
    return out_.size() == before;
  }

  void check_composition() {
    if (!e_.composition) return;
    std::set<std::string> names;
    for (std::size_t i = 0; i < e_.composition->size(); ++i) {
      const Stage& s = (*e_.composition)[i];
      // The loader drops a malformed stage, so the field of the stage's origin keeps its index.
      std::string field =
          s.origin.field.empty() ? fmt::format("composition.stages[{}]", i) : s.origin.field;
      if (!names.insert(s.name).second)
        report(s.origin, field, fmt::format("stage name '{}' repeats", s.name));
      if (s.op == e_.name)
        report(s.origin, field, "a composite op cannot be its own stage");
      else if (!m_.find(s.op))
        report(s.origin, field, fmt::format("'{}' is not an op of the manifest", s.op));
    }
  }

  void check_workloads(const SignaturePlan& plan) {
    std::set<std::string> ids;
    std::vector<bool> passed(e_.inputs.size(), false), omitted(e_.inputs.size(), false);
    std::vector<std::string> dtype_indices;
    for (const IndexDecl& idx : e_.forall)
      if (idx.kind == IndexKind::kDType) dtype_indices.push_back(idx.name);
    for (std::size_t r = 0; r < e_.workloads.size(); ++r) {
      const WorkloadRow& row = e_.workloads[r];
      std::string field = fmt::format("workloads[{}]", r);
      bool ok = true;
      for (const ParamDecl& p : e_.params)
        if (!p.tensor && !p.default_value && !row.params.contains(p.name)) {
          report(row.origin, field,
                 fmt::format("gives no value for the required param '{}'", p.name));
          ok = false;
        }
      for (const std::string& s : row.some) {
        const TensorDecl* t = e_.find_input(s);
        if (!t || !t->optional) {
          report(row.origin, field + ".some", fmt::format("'{}' is not an optional input", s));
          ok = false;
        }
      }
      for (std::size_t i = 0; i < e_.inputs.size(); ++i) {
        if (!e_.inputs[i].optional) continue;
        bool in = std::find(row.some.begin(), row.some.end(), e_.inputs[i].name) != row.some.end();
        (in ? passed : omitted)[i] = true;
      }
      // Exactly the free shape indices of the inputs this row passes.
      std::set<std::string> needed;
      for (std::size_t i = 0; i < e_.inputs.size(); ++i) {
        const TensorDecl& t = e_.inputs[i];
        if (t.optional && std::find(row.some.begin(), row.some.end(), t.name) == row.some.end())
          continue;
        for (const AxisTerm& a : t.shape.axes)
          for (const std::string& n : expr::free_names(*a.expr.ast))
            if (const IndexDecl* idx = e_.find_index(n); idx && idx->kind != IndexKind::kDType)
              needed.insert(n);
      }
      std::set<std::string> given;
      for (const auto& [name, value] : row.indices) {
        const IndexDecl* idx = e_.find_index(name);
        given.insert(name);
        if (idx->kind == IndexKind::kDType) {
          report(row.origin, field + "." + name, "a DType index is given in dtype_cases");
          ok = false;
        } else if (!needed.count(name)) {
          report(row.origin, field + "." + name,
                 "is not a shape index of the inputs this row passes");
          ok = false;
        } else if (idx->kind == IndexKind::kDim && !(value.is_int() && value.as_int() >= 0)) {
          report(row.origin, field + "." + name,
                 fmt::format("{} is not an axis length", value.repr()));
          ok = false;
        } else if (idx->kind != IndexKind::kDim &&
                   !(value.is_int_list() || (value.is_tuple() && value.as_tuple().empty()))) {
          report(row.origin, field + "." + name,
                 fmt::format("{} is not a list of axis lengths", value.repr()));
          ok = false;
        }
      }
      for (const std::string& n : needed)
        if (!given.count(n)) {
          report(row.origin, field, fmt::format("gives no value for the index '{}'", n));
          ok = false;
        }
      if (dtype_indices.empty() && !row.dtype_cases.empty()) {
        report(row.origin, field + ".dtype_cases", "the entry has no DType index");
        ok = false;
      }
      if (!dtype_indices.empty() && row.dtype_cases.empty()) {
        report(row.origin, field, "gives no dtype_cases");
        ok = false;
      }
      for (std::size_t c = 0; c < row.dtype_cases.size(); ++c) {
        std::vector<std::string> keys;
        for (const auto& [name, dt] : row.dtype_cases[c]) {
          keys.push_back(name);
          const IndexDecl* idx = e_.find_index(name);
          if (!idx || idx->kind != IndexKind::kDType) {
            report(row.origin, fmt::format("{}.dtype_cases[{}]", field, c),
                   fmt::format("'{}' is not a DType index", name));
            ok = false;
          } else if (std::find(idx->dtypes.begin(), idx->dtypes.end(), dt) == idx->dtypes.end()) {
            report(row.origin, fmt::format("{}.dtype_cases[{}]", field, c),
                   fmt::format("{} is not in {}'s set", dtype_name(dt), name));
            ok = false;
          }
        }
        std::vector<std::string> want = dtype_indices;
        std::sort(keys.begin(), keys.end());
        std::sort(want.begin(), want.end());
        if (ok && keys != want) {
          report(row.origin, fmt::format("{}.dtype_cases[{}]", field, c),
                 "assigns exactly the DType indices");
          ok = false;
        }
      }
      // Rows are instantiated only over well-formed dtype_combos: a broken row would fail them all.
      if (!ok || !combos_ok_) continue;
      instantiate(plan, row, field, ids);
    }
    for (std::size_t i = 0; i < e_.inputs.size(); ++i) {
      if (!e_.inputs[i].optional) continue;
      if (!passed[i])
        report(e_.origins.workloads, "workloads",
               fmt::format("no row passes the optional input '{}'", e_.inputs[i].name));
      if (!omitted[i])
        report(e_.origins.workloads, "workloads",
               fmt::format("no row omits the optional input '{}'", e_.inputs[i].name));
    }
  }

  void instantiate(const SignaturePlan& plan, const WorkloadRow& row, const std::string& field,
                   std::set<std::string>& ids) {
    try {
      for (const WorkloadCase& c : instantiate_workload(plan, row)) {
        if (!ids.insert(c.id).second)
          report(row.origin, field, fmt::format("case id '{}' repeats", c.id));
        ConstructionState state = plan.construct(c.params);
        std::vector<std::optional<Tensor>> inputs;
        for (const auto& spec : c.inputs)
          inputs.push_back(spec ? std::optional<Tensor>(Tensor::meta(spec->shape, spec->dtype))
                                : std::nullopt);
        SignatureCall call = plan.check(state, inputs);
        for (const auto& [name, value] : row.indices) {
          const Value& solved = call.index(name);
          bool same = solved == value || (value.is_tuple() && value.as_tuple().empty() &&
                                          solved.is_int_list() && solved.as_int_list().empty());
          if (!same)
            report(row.origin, field,
                   fmt::format("the call solves {} = {}, not the row's {}", name, solved.repr(),
                               value.repr()));
        }
        RooflineResult roof = plan.eval_roofline(call);
        if (roof.flops < 0 || roof.bytes < 0)
          report(row.origin, field, fmt::format("roofline is negative for '{}'", c.id));
      }
    } catch (const Error& err) {
      report(row.origin, field, fmt::format("does not instantiate: {}", err.what()));
    }
  }

  const Manifest& m_;
  const Entry& e_;
  std::shared_ptr<const Entry> entry_ptr_;
  std::vector<std::string>& out_;
  bool combos_ok_ = true;
};

std::vector<std::string> finish(std::vector<std::string> diags) {
  std::stable_sort(diags.begin(), diags.end());
  return diags;
}

}  // namespace

std::vector<std::string> validate(const Manifest& m) {
  std::vector<std::string> out;
  for (const auto& e : m.entries()) EntryValidator(m, e, out).run();
  return finish(std::move(out));
}

std::vector<std::string> validate_files(const std::vector<std::string>& paths) {
  std::vector<std::string> load;
  Manifest all;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) {
      load.push_back(fmt::format("{}: cannot read the file", path));
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    all.merge(Manifest::parse(path, text.str(), load), load);
  }
  std::vector<std::string> rest = validate(all);
  load.insert(load.end(), rest.begin(), rest.end());
  return load;
}

std::vector<std::string> validate_builtin() {
  std::vector<std::string> load;
  Manifest all;
  for (const auto& f : tileops::detail::embedded_manifest_files())
    all.merge(Manifest::parse(f.name, f.content, load), load);
  std::vector<std::string> rest = validate(all);
  load.insert(load.end(), rest.begin(), rest.end());
  return load;
}

}  // namespace tileops::manifest
