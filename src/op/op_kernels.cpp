// Kernel selection and the entry caches (docs/seeds.md, construction-and-calls §5;
// docs/framework.md, Kernel selection).
#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <memory>

#include "op/backend_registry.hpp"
#include "op/binding.hpp"
#include "op/dispatch_sinks.hpp"
#include "op/installed_table.hpp"
#include "op/read_section.hpp"
#include "op/type_name.hpp"
#include "tileops/op/op.hpp"

namespace tileops {
namespace {

using detail::type_name;

std::string forced_key() {
  const char* v = std::getenv("TILEOPS_FORCE");
  return v ? std::string(v) : std::string();
}

// The index of `interface` found by the address of its mangled name, -1 when that finds none. A
// type's type_info is normally one object in the process, and this look is what every kernel_for
// takes; type_index's == compares the names' text whenever the addresses differ, which
// Op::interface_index does next (a shared library may duplicate a type's type_info).
inline int interface_by_address(const std::vector<detail::InstalledInterface>& ifaces,
                                std::type_index interface) noexcept {
  for (std::size_t i = 0; i < ifaces.size(); ++i)
    if (ifaces[i].decl->interface_type.name() == interface.name()) return static_cast<int>(i);
  return -1;
}

// The facts selection reads: those the spec states (key_for, explain_call), else its device's.
DeviceFacts facts_of(const CallSpecBase& spec) {
  if (spec.stated_facts) return *spec.stated_facts;
  return spec.device ? device_facts(*spec.device) : DeviceFacts{};
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

}  // namespace

int Op::interface_index(std::type_index interface) const {
  const auto& ifaces = installed_->interfaces;
  if (const int i = interface_by_address(ifaces, interface); i >= 0) return i;
  for (std::size_t i = 0; i < ifaces.size(); ++i)
    if (ifaces[i].decl->interface_type == interface) return static_cast<int>(i);
  throw OpNotAvailableError(
      fmt::format("{} has no in-tree implementation for this interface ({}), so it needs a "
                  "target that registers one; known targets for this op: {}",
                  name(), type_name(interface), detail::targets_for(name())));
}

int Op::interface_index(std::string_view interface) const {
  const auto& ifaces = installed_->interfaces;
  for (std::size_t i = 0; i < ifaces.size(); ++i)
    if (ifaces[i].decl->name == interface) return static_cast<int>(i);
  throw OpNotAvailableError(
      fmt::format("{} has no in-tree implementation for '{}', so it needs a target that "
                  "registers one; known targets for this op: {}",
                  name(), interface, detail::targets_for(name())));
}

int Op::interface_taking(std::string_view interface, std::type_index call) const {
  const int i = interface_index(interface);
  const InterfaceDecl& decl = *installed_->interfaces[i].decl;
  if (decl.call_type != call)
    throw ContractError(fmt::format("{}.{} takes a {} call spec, not {}", name(), decl.name,
                                    type_name(decl.call_type), type_name(call)));
  return i;
}

void Op::refuse_stated_facts(std::type_index interface) const {
  int i = interface_index(interface);
  throw ContractError(
      fmt::format("{}.{} reads the device facts from the call's device; this call spec states "
                  "['arch', 'sm_count', 'smem_budget']",
                  name(), installed_->interfaces[i].decl->name));
}

DispatchEvent Op::dispatch_event(int interface, const void* call) const {
  const detail::InstalledInterface& ii = installed_->interfaces[interface];
  const CallSpecOps& ops = *ii.decl->call_ops;
  const CallSpecBase& base = ops.base(call);
  DispatchEvent e;
  e.op = name();
  e.instance = instance_key_;
  e.interface = ii.decl->name;
  e.call = ops.str(call);
  e.device = base.device;
  e.facts = facts_of(base);
  // TILEOPS_FORCE names one key of the process; an interface without that key ignores it.
  e.forced = forced_key();
  bool force_here = false;
  for (int k : ii.keys) force_here = force_here || installed_->types[k].key == e.forced;
  if (!force_here) e.forced.clear();
  detail::InstalledTable::Choice c = installed_->choose(interface, call, e.facts, e.forced);
  e.verdicts = std::move(c.verdicts);
  e.outcome = c.outcome;
  if (c.winner >= 0) e.winner = installed_->types[c.winner].key;
  for (int k : c.ambiguous) e.ambiguous.push_back(installed_->types[k].key);
  return e;
}

std::string Op::select_key(int interface, const void* call) const {
  DispatchEvent e = dispatch_event(interface, call);
  detail::publish_dispatch(e);
  switch (e.outcome) {
    case DispatchOutcome::kSelected:
      return std::move(e.winner);
    case DispatchOutcome::kForcedKeyRefuses:
      for (const ImplementationVerdict& v : e.verdicts)
        if (v.key == e.forced)
          throw SelectionError(
              fmt::format("{}: TILEOPS_FORCE={} refuses this call: {} ({}: {}). Call: {}", name(),
                          e.forced, v.key, v.class_name, v.reason, e.call));
      break;
    case DispatchOutcome::kAmbiguous:
      throw SelectionError(
          fmt::format("{}: dispatch is ambiguous: {} all serve this call, and none is preferred "
                      "over the others. Call: {}",
                      name(), join(e.ambiguous, ", "), e.call));
    case DispatchOutcome::kNotOnDevice:
      throw OpNotAvailableError(
          fmt::format("{}'s in-tree kernels do not run on {}; known targets for this op: {}",
                      name(), e.device ? e.device->str() : std::string("an unknown device"),
                      detail::targets_for(name())));
    case DispatchOutcome::kNothingServes:
      break;
  }
  std::vector<std::string> refused;
  for (const ImplementationVerdict& v : e.verdicts)
    if (!v.serves() && v.kind != VerdictKind::kForcedAway)
      refused.push_back(fmt::format("{} ({}: {})", v.key, v.class_name, v.reason));
  throw SelectionError(fmt::format(
      "{}: no implementation serves this call: {}. Call: {}", name(),
      refused.empty() ? std::string("no implementation is installed") : join(refused, ", "),
      e.call));
}

std::vector<std::pair<std::string, std::string>> Op::key_verdicts(int interface,
                                                                  const void* call) const {
  const detail::InstalledInterface& ii = installed_->interfaces[interface];
  const DeviceFacts facts = facts_of(ii.decl->call_ops->base(call));
  std::vector<std::pair<std::string, std::string>> out;
  for (ImplementationVerdict& v : installed_->choose(interface, call, facts, {}).verdicts)
    out.emplace_back(std::move(v.key), std::move(v.reason));
  return out;
}

const std::shared_ptr<KernelInterface>& Op::entry_for_call(std::type_index interface,
                                                           const void* call) {
  int i = interface_by_address(installed_->interfaces, interface);
  if (i < 0) i = interface_index(interface);
  detail::ReadSection reading;  // Note [Binding reclamation]
  detail::Binding* b = binding_fast_.load(std::memory_order_seq_cst);
  const detail::EntryTable& by_call = b->caches[i]->by_call;
  const std::size_t hash = by_call.ops().hash(call);
  if (const std::shared_ptr<KernelInterface>* entry = by_call.find(hash, call)) return *entry;
  return b->build_entry(*this, i, call, hash);
}

const std::shared_ptr<KernelInterface>& detail::Binding::build_entry(Op& op, int interface,
                                                                     const void* call,
                                                                     std::size_t hash) {
  InterfaceCache& cache = *caches[interface];
  const CallSpecOps& ops = cache.by_call.ops();
  std::lock_guard<std::mutex> build_lock(build_mutex);
  // Another thread may have cached this spec since the caller's look-up.
  if (const std::shared_ptr<KernelInterface>* entry = cache.by_call.find(hash, call)) return *entry;
  const InstalledTable& installed = *op.installed_;
  const std::string key = op.select_key(interface, call);
  int type_index = -1;
  for (int k : installed.interfaces[interface].keys)
    if (installed.types[k].key == key) type_index = k;
  const KernelType& type = installed.types[type_index];
  EntryRecipe<KernelInterface> recipe = type.entry_for(call);
  BuiltKey built_key{type_index, recipe.identity};
  std::shared_ptr<KernelInterface> entry;
  {
    std::shared_lock<std::shared_mutex> lock(cache.mutex);
    auto it = cache.built.find(built_key);
    if (it != cache.built.end()) entry = it->second;
  }
  if (!entry) {
    CurrentDeviceGuard guard(ops.base(call).device);
    entry = recipe.build();
    if (!entry)
      throw OpNotAvailableError(
          fmt::format("{}: {} ('{}') built no entry", op.name(), type.class_name, key));
    {
      std::unique_lock<std::shared_mutex> lock(cache.mutex);
      cache.built.emplace(built_key, entry);
      cache.built_order.push_back(built_key);
    }
    // Note [Tuning while building]: the entry is tuned after it is published, still with its
    // device current. request_tune sets the flag before it walks the caches, so a request racing
    // with this build either finds the entry there or its flag is seen here; Kernel::request_tune
    // is idempotent, so being reached both ways tunes once.
    if (op.tune_requested_.load())
      if (auto kernel = std::dynamic_pointer_cast<Kernel>(entry)) kernel->request_tune();
  }
  return cache.by_call.insert(hash, ops.copy(call), entry);
}

std::vector<BuiltEntry> Op::built_entries(std::string_view interface) const {
  auto b = binding();
  std::vector<BuiltEntry> out;
  if (b->resolved.load(std::memory_order_acquire) && b->builder) {
    std::shared_lock<std::shared_mutex> lock(b->target_mutex);
    for (const auto& kv : b->target_kernels) {
      std::string key = "target:" + b->serving->str() + " on " + kv.first.device.str();
      for (const auto& in : kv.first.inputs)
        key +=
            in ? " " + std::string(dtype_name(in->first)) + in->second.str() : std::string(" None");
      out.push_back({std::move(key), Identity(), nullptr});
    }
    return out;
  }
  const int i = interface_index(interface);
  const detail::InterfaceCache& cache = *b->caches[i];
  std::shared_lock<std::shared_mutex> lock(cache.mutex);
  for (const detail::BuiltKey& k : cache.built_order)
    out.push_back({installed_->types[k.type].key, k.identity, cache.built.at(k)});
  return out;
}

std::vector<std::shared_ptr<Kernel>> Op::iter_kernels() const {
  std::vector<std::shared_ptr<Kernel>> out;
  std::vector<const Op*> seen;
  std::function<void(const Op&)> walk = [&](const Op& op) {
    if (std::find(seen.begin(), seen.end(), &op) != seen.end()) return;
    seen.push_back(&op);
    auto b = op.binding();
    for (const auto& cache : b->caches) {
      std::shared_lock<std::shared_mutex> lock(cache->mutex);
      for (const detail::BuiltKey& k : cache->built_order) {
        auto kernel = std::dynamic_pointer_cast<Kernel>(cache->built.at(k));
        if (kernel && std::find(out.begin(), out.end(), kernel) == out.end()) out.push_back(kernel);
      }
    }
    for (const auto& sub : op.held_delegates()) walk(*sub);
  };
  walk(*this);
  return out;
}

void Op::request_tune() {
  std::vector<Op*> seen;
  std::function<void(Op&)> walk = [&](Op& op) {
    if (std::find(seen.begin(), seen.end(), &op) != seen.end()) return;
    seen.push_back(&op);
    op.tune_requested_.store(true);
    auto b = op.binding();
    std::vector<std::shared_ptr<detail::BuiltTargetKernel>> target_kernels;
    {
      std::shared_lock<std::shared_mutex> lock(b->target_mutex);
      for (const auto& [key, k] : b->target_kernels) target_kernels.push_back(k);
    }
    for (const auto& k : target_kernels) op.tune_target_kernel(*k, *b);
    for (const auto& sub : op.held_delegates()) walk(*sub);
  };
  walk(*this);
  for (const auto& kernel : iter_kernels()) kernel->request_tune();
}

void Op::tune_target_kernel(detail::BuiltTargetKernel& kernel, const detail::Binding& binding) {
  if (kernel.tune_sent.exchange(true)) return;
  if (kernel.kernel.request_tune) {
    kernel.kernel.request_tune();
  } else if (!tune_warned_.exchange(true)) {
    std::fprintf(stderr,
                 "tileops: warning: %s: the kernel target '%s' built has no request_tune; tuning "
                 "is skipped\n",
                 name().c_str(), binding.serving ? binding.serving->str().c_str() : "?");
  }
}

}  // namespace tileops

namespace tileops {

std::size_t Op::cached_call_specs(std::string_view interface) const {
  auto b = binding();
  return b->caches[interface_index(interface)]->by_call.size();
}

}  // namespace tileops
