// Holding sub-ops (seeds: composite-ops §1).
#include <fmt/format.h>

#include "op/type_name.hpp"
#include "tileops/op/op.hpp"

namespace tileops {

Op& Op::hold_delegate(std::string_view stage, Identity identity, std::shared_ptr<Op> given,
                      const ParamMap& params, std::type_index type) {
  const StageDecl* decl = nullptr;
  for (const StageDecl& s : cls_.stages())
    if (s.name == stage) decl = &s;
  if (!decl) throw CheckError(fmt::format("{}: '{}' is not a stage of {}", name(), stage, name()));
  if (decl->op_type != type)
    throw ContractError(fmt::format("{}: stage '{}' holds {} ops ({}), not the requested {}",
                                    name(), stage, decl->op_name, detail::type_name(decl->op_type),
                                    detail::type_name(type)));
  std::shared_ptr<Op> held;
  bool tune = false;
  {
    std::lock_guard<std::mutex> lock(running_mutex_);
    auto& slot = std::find_if(delegates_.begin(), delegates_.end(), [&](const auto& d) {
                   return d.first == stage;
                 })->second;
    for (const auto& [id, op] : slot)
      if (id == identity) return *op;
    held = given ? std::move(given) : decl->make(params, target_);
    if (delegate_stages_.count(held.get()))
      throw CheckError(
          fmt::format("{}: already holds this {} for stage '{}'; one instance is held once", name(),
                      held->name(), delegate_stages_.at(held.get())));
    slot.emplace_back(std::move(identity), held);
    delegate_stages_.emplace(held.get(), std::string(stage));
    tune = tune_requested_.load();
  }
  if (tune) held->request_tune();
  return *held;
}

std::vector<std::shared_ptr<Op>> Op::held_delegates() const {
  std::lock_guard<std::mutex> lock(running_mutex_);
  std::vector<std::shared_ptr<Op>> out;
  for (const auto& [stage, held] : delegates_)
    for (const auto& [id, op] : held) out.push_back(op);
  return out;
}

}  // namespace tileops
