// Op construction (docs/seeds.md, construction-and-calls Table 1), the instance registry and
// accessors.
#include "tileops/op/op.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "op/backend_registry.hpp"
#include "op/binding.hpp"
#include "op/installed_table.hpp"
#include "op/read_section.hpp"
#include "op/record_pool.hpp"

namespace tileops {
namespace {

struct InstanceRegistry {
  std::mutex mutex;
  std::map<std::string, Op*, std::less<>> instances;
  std::map<std::string, std::uint64_t, std::less<>> counters;
};

InstanceRegistry& instances() {
  static InstanceRegistry r;
  return r;
}

std::string register_instance(Op* op, const std::string& class_name) {
  InstanceRegistry& r = instances();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string key = fmt::format("{}#{}", class_name, r.counters[class_name]++);
  r.instances.emplace(key, op);
  return key;
}

ParamMap without_injected(const ParamMap& params, const std::vector<std::string>& injected) {
  ParamMap out;
  for (const auto& [name, value] : params)
    if (std::find(injected.begin(), injected.end(), name) == injected.end()) out.set(name, value);
  return out;
}

}  // namespace

std::size_t detail::TargetKeyHash::operator()(const TargetKey& k) const noexcept {
  std::size_t h = std::hash<Device>{}(k.device);
  for (const auto& in : k.inputs) {
    h = h * 1000003u ^ (in ? static_cast<std::size_t>(in->first) + 1 : 0);
    if (in)
      for (std::int64_t d : in->second) h = h * 31 + static_cast<std::size_t>(d);
  }
  return h;
}

void detail::Binding::clear() {
  for (auto& c : caches) {
    std::unique_lock<std::shared_mutex> lock(c->mutex);
    c->built.clear();
    c->built_order.clear();
  }
  std::unique_lock<std::shared_mutex> lock(target_mutex);
  target_kernels.clear();
}

std::shared_ptr<Op> find_instance(std::string_view key) {
  InstanceRegistry& r = instances();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.instances.find(key);
  if (it == r.instances.end()) return nullptr;
  // Under the registry's lock the instance's enable_shared_from_this base is alive: ~Op erases
  // the key under this lock before its bases are destroyed. Once its last owner is gone (its
  // destructor may be running), the weak reference no longer locks.
  return it->second->weak_from_this().lock();
}

Op::Op(const OpClass& cls, ParamMap params, std::optional<Target> target,
       std::span<const std::optional<Tensor>> ctor_tensors)
    : cls_(cls), target_(std::move(target)) {
  // 1. The backend registry is loaded before anything can select from it.
  detail::ensure_backends_loaded();
  // 2. The params against the manifest; the solved values are kept for every call.
  plan_ = cls.plan();
  construction_ = plan_->construct(without_injected(params, cls.injected()), ctor_tensors);
  params_ = plan_->params_of(construction_);
  // 3. The stages against the entry's composition, and the implementation table against the
  // interfaces' contracts.
  cls.check_composition();
  installed_ = std::make_shared<const detail::InstalledTable>(
      detail::InstalledTable::install(cls, detail::registered_kernel_types(cls.name())));
  // 4. The instance key.
  instance_key_ = register_instance(this, cls.name());
  // 5. The empty binding and running state.
  binding_ = std::make_shared<detail::Binding>(cls.interfaces());
  binding_fast_.store(binding_.get(), std::memory_order_seq_cst);
  placed_ctor_tensors_.resize(construction_.ctor_tensors.size());
  records_ = std::make_shared<detail::RecordPool>();
  for (const StageDecl& s : cls.stages())
    delegates_.emplace_back(s.name, std::vector<std::pair<Identity, std::shared_ptr<Op>>>{});
}

Op::~Op() {
  delete unpublished_.exchange(nullptr, std::memory_order_acquire);
  InstanceRegistry& r = instances();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.instances.erase(instance_key_);
}

std::shared_ptr<detail::Binding> Op::binding() const {
  std::lock_guard<std::mutex> lock(binding_mutex_);
  return binding_;
}

std::optional<Target> Op::serving_target() const {
  auto b = binding();
  return b->resolved ? b->serving : std::nullopt;
}

void Op::reset_binding() {
  // Each op once, as iter_kernels and request_tune walk: a sub-op may hold its parent back.
  std::vector<Op*> seen;
  std::function<void(Op&)> walk = [&](Op& op) {
    if (std::find(seen.begin(), seen.end(), &op) != seen.end()) return;
    seen.push_back(&op);
    for (const auto& sub : op.held_delegates()) walk(*sub);
    op.retire_binding();
  };
  walk(*this);
}

void Op::retire_binding() {
  std::shared_ptr<detail::Binding> old;
  std::vector<std::shared_ptr<detail::Binding>> freed;  // released after the lock
  {
    std::lock_guard<std::mutex> lock(binding_mutex_);
    old = binding_;
    binding_ = std::make_shared<detail::Binding>(cls_.interfaces());
    // See Note [Binding reclamation]: unpublished first, then tagged with the next epoch; freed
    // once every open read section entered at that epoch or later.
    binding_fast_.store(binding_.get(), std::memory_order_seq_cst);
    retired_bindings_.emplace_back(old, detail::advance_epoch());
    const std::uint64_t oldest = detail::oldest_section();
    auto reclaimable = std::partition(retired_bindings_.begin(), retired_bindings_.end(),
                                      [&](const auto& r) { return r.second > oldest; });
    for (auto it = reclaimable; it != retired_bindings_.end(); ++it)
      freed.push_back(std::move(it->first));
    retired_bindings_.erase(reclaimable, retired_bindings_.end());
  }
  old->clear();
}

std::size_t detail::Binding::retired_count(const Op& op) {
  std::lock_guard<std::mutex> lock(op.binding_mutex_);
  return op.retired_bindings_.size();
}

// See Note [Lazy publication] in op_call.cpp.
const std::shared_ptr<const manifest::SignatureCall>& Op::published_last_call() const {
  if (manifest::SignatureCall* newest = unpublished_.exchange(nullptr, std::memory_order_acq_rel))
    last_call_ = records_->publish(std::unique_ptr<manifest::SignatureCall>(newest));
  return last_call_;
}

std::shared_ptr<const manifest::SignatureCall> Op::last_call() const {
  std::lock_guard<std::mutex> lock(running_mutex_);
  const std::shared_ptr<const manifest::SignatureCall>& call = published_last_call();
  if (!call) throw RuntimeStateError(fmt::format("{}: no call has completed yet", name()));
  return call;
}

manifest::RooflineResult Op::eval_roofline() const {
  std::shared_ptr<const manifest::SignatureCall> call;
  {
    std::lock_guard<std::mutex> lock(running_mutex_);
    call = published_last_call();
  }
  if (!call)
    throw RuntimeStateError(fmt::format("{}: eval_roofline needs a completed call", name()));
  return plan_->eval_roofline(*call);
}

manifest::EffectBranch Op::effect_branch(std::span<const std::optional<Tensor>> inputs,
                                         bool has_out) const {
  return plan_->effect_branch(construction_, plan_->presence_of(inputs, has_out));
}

Tensor Op::allocate_output(const CallArgs& args, std::size_t i) const {
  const manifest::Entry& entry = plan_->entry();
  const manifest::TensorDecl& decl = entry.outputs.at(i);
  if (decl.buffer_out && args.out) return *args.out;
  if (!decl.alias.empty()) {
    for (std::size_t k = 0; k < entry.inputs.size(); ++k)
      if (entry.inputs[k].name == decl.alias && args.call.writes_input(k)) return args.input(k);
  }
  const manifest::TensorRecord& rec = args.call.output(i);
  return Tensor::empty(rec.shape, rec.dtype, args.device(), &args.stream);
}

}  // namespace tileops

namespace tileops {

KernelCalls Op::kernel_calls(const CallArgs&) const { return {}; }

}  // namespace tileops
