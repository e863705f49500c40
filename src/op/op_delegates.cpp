// Holding sub-ops (docs/seeds.md, composite-ops §1).
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

namespace tileops {

// Note [Errors inside a stage]: a sub-op's error names the sub-op ("AddFwdOp's in-tree kernels do
// not run on cuda:0"), which tells a caller of the composite neither which op they called nor
// where it failed. Each composite level the error passes through prefixes itself and the stage,
// "ResidualRMSNormFwdOp: stage 'add': AddFwdOp's ...", keeping the error's type so that callers
// catching OpNotAvailableError (or a Python mapping of it) still do.
void Op::rethrow_in_stage(const Op& sub) const {
  std::string stage;
  {
    std::lock_guard<std::mutex> lock(running_mutex_);
    auto it = delegate_stages_.find(&sub);
    if (it == delegate_stages_.end()) return;
    stage = it->second;
  }
  const std::string prefix = fmt::format("{}: stage '{}': ", name(), stage);
  try {
    throw;
  } catch (const CudaError& e) {
    throw CudaError(prefix + e.what());
  } catch (const DLPackError& e) {
    throw DLPackError(prefix + e.what());
  } catch (const RuntimeStateError& e) {
    throw RuntimeStateError(prefix + e.what());
  } catch (const SelectionError& e) {
    throw SelectionError(prefix + e.what());
  } catch (const OpNotAvailableError& e) {
    throw OpNotAvailableError(prefix + e.what());
  } catch (const AmbiguousTargetError& e) {
    throw AmbiguousTargetError(prefix + e.what());
  } catch (const UnknownTargetError& e) {
    throw UnknownTargetError(prefix + e.what());
  } catch (const BackendError& e) {
    throw BackendError(prefix + e.what());
  } catch (const EvalError& e) {
    throw EvalError(prefix + e.what());
  } catch (const ManifestError& e) {
    throw ManifestError(prefix + e.what());
  } catch (const ContractError& e) {
    throw ContractError(prefix + e.what());
  } catch (const CheckError& e) {
    throw CheckError(prefix + e.what());
  } catch (const Error& e) {
    throw Error(prefix + e.what());
  } catch (...) {
    return;  // not the library's: passes through unchanged
  }
}

}  // namespace tileops
