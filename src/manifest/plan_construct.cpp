// The construction check (docs/seeds.md, construction-and-calls Table 1, step 2) and the lazy
// specialisation per construction point.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "manifest/plan_exec.hpp"
#include "manifest/plan_internal.hpp"
#include "manifest/text_util.hpp"
#include "tileops/core/error.hpp"
#include "tileops/manifest/param_type.hpp"

namespace tileops::manifest {

using detail::PlanData;
using detail::PlanTensor;

ConstructionState SignaturePlan::construct(
    const ParamMap& params, std::span<const std::optional<Tensor>> ctor_tensors) const {
  const PlanData& d = *data_;
  const Entry& e = *d.entry;
  static std::atomic<std::uint64_t> next_id{1};
  ConstructionState state;
  state.id = next_id.fetch_add(1, std::memory_order_relaxed);
  state.frame.assign(d.scope.num_slots(), Value());
  for (const auto& [name, value] : params) {
    const ParamDecl* p = e.find_param(name);
    if (!p || p->tensor) throw CheckError(fmt::format("{}: unknown param '{}'", d.op_name, name));
  }
  state.ctor_tensors.assign(d.num_ctor, std::nullopt);
  if (ctor_tensors.size() > static_cast<std::size_t>(d.num_ctor))
    throw CheckError(fmt::format("{}: takes {} construction-time tensors, got {}", d.op_name,
                                 d.num_ctor, ctor_tensors.size()));
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const ParamDecl& p = e.params[i];
    int slot = d.param_slots[i];
    if (p.tensor) {
      const PlanTensor& t = d.tensors[detail::slot_tensor(d, slot)];
      std::optional<Tensor> given = t.role_index < static_cast<int>(ctor_tensors.size())
                                        ? ctor_tensors[t.role_index]
                                        : std::nullopt;
      if (given && !given->defined()) given.reset();
      if (!given && !p.tensor->optional)
        throw CheckError(
            fmt::format("{}: construction-time tensor '{}' is required", d.op_name, p.name));
      state.ctor_tensors[t.role_index] = given;
      state.frame[slot] = given ? Value(true) : Value();
      continue;
    }
    const Value* given = params.find(p.name);
    if (!given) {
      if (!p.default_value)
        throw CheckError(fmt::format("{}: param '{}' is required", d.op_name, p.name));
      state.frame[slot] = *p.default_value;
      continue;
    }
    auto conformed = conform_param_value(p.type, *given);
    if (!conformed)
      throw CheckError(fmt::format("{}: param '{}' = {} is not {}", d.op_name, p.name,
                                   given->repr(), detail::with_article(p.type.text)));
    state.frame[slot] = std::move(*conformed);
  }
  // A `device` param decides the device of a call without tensors: a text that names no device
  // is reported here, with the op's name, rather than at the first call.
  if (const ParamDecl* p = e.find_param("device"); p && !p->tensor) {
    const Value& v = state.frame[d.scope.find("device")->slot];
    if (v.is_str()) {
      state.device = Device::try_parse(v.as_str());
      if (!state.device)
        throw CheckError(fmt::format("{}: param 'device' = {} is not a device; expected {}",
                                     d.op_name, v.repr(), Device::kSpellings));
    }
  }
  // Params written into shapes are axis lengths: they may not be negative.
  for (const PlanTensor& t : d.tensors) {
    for (std::size_t k = 0; k < t.axes.size(); ++k) {
      const expr::Ast& a = *t.decl->shape.axes[k].expr.ast;
      if (a.op != expr::AstOp::kName) continue;
      const ParamDecl* p = e.find_param(a.text);
      if (!p || p->tensor) continue;
      const Value& v = state.frame[d.scope.find(a.text)->slot];
      bool negative =
          (v.is_int() && v.as_int() < 0) ||
          (v.is_int_list() && std::any_of(v.as_int_list().begin(), v.as_int_list().end(),
                                          [](std::int64_t x) { return x < 0; }));
      if (negative)
        throw CheckError(
            fmt::format("{}: param '{}' = {} is an axis length of {} and may not be negative",
                        d.op_name, p->name, v.repr(), t.decl->name));
    }
  }
  detail::CallScratch scratch(d);
  std::vector<TensorRecord> records(d.tensors.size());
  for (int i = 0; i < d.num_ctor; ++i) {
    if (const auto& t = state.ctor_tensors[i]) {
      records[i].present = true;
      records[i].shape = t->shape();
      records[i].dtype = t->dtype();
    }
  }
  detail::run_schedule(d, d.construction, state.frame, records, scratch);
  state.point = specialise(state.frame);
  return state;
}

ParamMap SignaturePlan::params_of(const ConstructionState& state) const {
  const PlanData& d = *data_;
  ParamMap out;
  for (std::size_t i = 0; i < d.entry->params.size(); ++i)
    if (!d.entry->params[i].tensor) out.set(d.entry->params[i].name, state.frame[d.param_slots[i]]);
  return out;
}

std::shared_ptr<const detail::Specialization> SignaturePlan::specialise(
    const std::vector<Value>& frame) const {
  const PlanData& d = *data_;
  std::vector<Value> key;
  for (int i : d.discriminant_params) key.push_back(frame[d.param_slots[i]]);
  std::lock_guard<std::mutex> lock(specialisations_mutex_);
  for (const auto& s : specialisations_)
    if (s->key == key) return s;
  auto spec = std::make_shared<detail::Specialization>();
  spec->key = key;
  std::size_t keys = std::size_t{1} << (d.out_bit + 1);
  spec->written.resize(keys);
  spec->branches.resize(keys);
  std::vector<Value> scratch_frame = frame;
  for (std::size_t presence = 0; presence < keys; ++presence) {
    for (int i = 0; i < d.num_inputs; ++i) {
      const PlanTensor& t = d.input(i);
      bool present = t.optional_bit < 0 || ((presence >> t.optional_bit) & 1u);
      scratch_frame[t.slot] = present ? Value(true) : Value();
    }
    scratch_frame[d.out_slot] = ((presence >> d.out_bit) & 1u) ? Value(true) : Value();
    std::uint32_t written = 0;
    for (int i = 0; i < d.num_inputs; ++i) {
      const PlanTensor& t = d.input(i);
      bool present = t.optional_bit < 0 || ((presence >> t.optional_bit) & 1u);
      bool writes = t.decl->mutated;
      if (!writes && d.mutated_when[i].valid()) {
        try {
          writes = d.mutated_when[i].eval(scratch_frame).as_bool();
        } catch (const Error& err) {
          throw CheckError(fmt::format("{}: signature.inputs.{}.mutated: {}", d.op_name,
                                       t.decl->name, err.what()));
        }
      }
      if (present && writes) written |= 1u << i;
    }
    spec->written[presence] = written;
    EffectBranch& b = spec->branches[presence];
    for (int i = 0; i < d.num_inputs; ++i)
      if ((written >> i) & 1u) b.written.push_back(d.input(i).decl->name);
    std::sort(b.written.begin(), b.written.end());
    b.has_out = (presence >> d.out_bit) & 1u;
    for (int o = 0; o < d.num_outputs; ++o) b.emitted.push_back(d.output(o).decl->name);
    b.operator_name = "tileops::" + d.stem;
    for (const auto& w : b.written) b.operator_name += "_writes_" + w;
    if (b.has_out) b.operator_name += "_out";
  }
  specialisations_.push_back(spec);
  return spec;
}

}  // namespace tileops::manifest
