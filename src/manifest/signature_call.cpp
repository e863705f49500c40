#include "tileops/manifest/signature_call.hpp"

#include <fmt/format.h>

#include "manifest/plan_internal.hpp"
#include "tileops/core/error.hpp"

namespace tileops::manifest {

using detail::PlanData;

namespace {

int tensor_index(const PlanData& d, std::string_view name) {
  const expr::Scope::Entry* e = d.scope.find(name);
  return e ? d.slot_tensor[e->slot] : -1;
}

}  // namespace

const Value& SignatureCall::index(std::string_view name) const {
  const PlanData& d = plan_->data();
  const expr::Scope::Entry* e = d.scope.find(name);
  if (!e || e->role == expr::NameRole::kTensor || frame_[e->slot].is_none())
    throw CheckError(fmt::format("{}: '{}' is not an index solved by this call", d.op_name, name));
  return frame_[e->slot];
}

std::vector<std::pair<std::string, Value>> SignatureCall::indices() const {
  const PlanData& d = plan_->data();
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& e : d.scope.entries()) {
    if (e.role == expr::NameRole::kTensor || frame_[e.slot].is_none()) continue;
    if (e.role == expr::NameRole::kIndex && d.slot_index[e.slot]->kind == IndexKind::kSeqInt)
      continue;
    out.emplace_back(e.name, frame_[e.slot]);
  }
  return out;
}

bool SignatureCall::present(std::string_view name) const {
  if (name == "out") return has_out_;
  int i = tensor_index(plan_->data(), name);
  if (i < 0)
    throw CheckError(
        fmt::format("{}: '{}' is not a tensor of the signature", plan_->op_name(), name));
  return tensors_[i].present;
}

const TensorRecord& SignatureCall::tensor(std::string_view name) const {
  int i = tensor_index(plan_->data(), name);
  if (i < 0)
    throw CheckError(
        fmt::format("{}: '{}' is not a tensor of the signature", plan_->op_name(), name));
  return tensors_[i];
}

std::int64_t SignatureCall::bytes(std::string_view name) const {
  const TensorRecord& t = tensor(name);
  if (!t.present)
    throw CheckError(fmt::format("{}: '{}' is absent in this call", plan_->op_name(), name));
  // (numel * bits + 7) / 8 without the product: every checked tensor's bytes fit int64 (Note
  // [Sizes that overflow] in plan_check.cpp), numel * bits may not.
  const std::int64_t numel = t.shape.numel();
  const std::int64_t bits = dtype_bits(t.dtype);
  return numel / 8 * bits + (numel % 8 * bits + 7) / 8;
}

std::vector<Traffic> SignatureCall::traffic() const {
  const PlanData& d = plan_->data();
  std::vector<Traffic> out;
  for (std::size_t i = 0; i < d.tensors.size(); ++i) {
    const auto& t = d.tensors[i];
    if (!tensors_[i].present) continue;
    switch (t.role) {
      case detail::PlanTensor::Role::kCtor:
        out.push_back({t.decl->name, 1, 0});
        break;
      case detail::PlanTensor::Role::kInput: {
        bool writes = writes_input(t.role_index);
        out.push_back({t.decl->name, t.decl->write_only ? 0 : 1, writes ? 1 : 0});
        break;
      }
      case detail::PlanTensor::Role::kOutput: {
        if (!t.decl->alias.empty()) {
          const TensorDecl* in = d.entry->find_input(t.decl->alias);
          if (writes_input(static_cast<std::size_t>(in - d.entry->inputs.data()))) break;
        }
        out.push_back({t.decl->name, 0, 1});
        break;
      }
    }
  }
  return out;
}

std::int64_t SignatureCall::derived_bytes() const {
  std::int64_t total = 0;
  for (const Traffic& t : traffic()) {
    std::int64_t moved = 0;
    if (__builtin_mul_overflow(bytes(t.name), t.reads + t.writes, &moved) ||
        __builtin_add_overflow(total, moved, &total))
      throw CheckError(
          fmt::format("{}: roofline.bytes: the bytes derived from the effects "
                      "overflow int64 at {}",
                      plan_->op_name(), t.name));
  }
  return total;
}

std::vector<std::string> SignatureCall::written() const {
  const PlanData& d = plan_->data();
  std::vector<std::string> out;
  for (int i = 0; i < d.num_inputs; ++i)
    if (writes_input(i)) out.push_back(d.input(i).decl->name);
  return out;
}

const TensorRecord& SignatureCall::output(std::size_t i) const {
  const PlanData& d = plan_->data();
  if (i >= static_cast<std::size_t>(d.num_outputs))
    throw CheckError(fmt::format("{}: output {} is outside the signature", d.op_name, i));
  return tensors_[d.num_ctor + d.num_inputs + i];
}

}  // namespace tileops::manifest
