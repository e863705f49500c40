// Op::explain_call and Op::check_call: what selection would decide for a call, and what the call
// would be, stated on meta tensors without running anything.
// The explanation is for `tileops explain --device`; the check, for fake kernels of a tracer.
//
// Note [Explaining a composite]
// A composite states no kernel calls of its own: its sub-ops select their kernels inside its
// forward, on tensors that forward derives (a residual sum, a reshaped view). explain_call
// therefore runs the composite's forward on the checked meta inputs under a thread-local explain
// scope. Each sub-op call that forward makes is then a meta call, and on the meta path run_call
// sees the scope: instead of completing the call it explains it (the sub-op's kernel calls, or
// its own stages in turn) and returns outputs of the inferred shapes, neither recording the call
// (the sub-op's last_call stays) nor reporting it to an enclosing frame. The events therefore show
// each stage's selection on the shapes that stage would receive, under the sub-op's instance key.
// A sub-op held lazily (delegate_for inside forward) is held as an ordinary call would hold it.
// The limit is the forward itself: one that reads tensor values, or makes tensors on a real
// device and calls a sub-op with them, cannot be stated on meta tensors; its error reaches the
// caller of explain_call.
#include "op/explain_scope.hpp"
#include "op/installed_table.hpp"
#include "tileops/op/op.hpp"

namespace tileops {
namespace detail {
namespace {

thread_local ExplainScope* innermost = nullptr;

}  // namespace

ExplainScope::ExplainScope(Device d, DeviceFacts f) : device(d), facts(f), previous_(innermost) {
  innermost = this;
}

ExplainScope::~ExplainScope() { innermost = previous_; }

ExplainScope* ExplainScope::current() noexcept { return innermost; }

}  // namespace detail

namespace {

// A meta tensor of `t`'s geometry: explaining reads shapes, dtypes and strides, never data.
Tensor as_meta(const Tensor& t) {
  if (t.is_meta()) return t;
  return Tensor::meta(t.shape(), t.dtype()).as_strided(t.shape(), t.strides(), 0);
}

}  // namespace

manifest::SignatureCall Op::check_call(std::span<const std::optional<Tensor>> inputs,
                                       const Tensor* out) const {
  std::vector<std::optional<Tensor>> metas;
  metas.reserve(inputs.size());
  for (const std::optional<Tensor>& t : inputs)
    metas.push_back(t && t->defined() ? std::optional<Tensor>(as_meta(*t)) : t);
  const std::optional<Tensor> out_meta =
      out && out->defined() ? std::optional<Tensor>(as_meta(*out)) : std::nullopt;
  const Tensor* out_arg = out_meta ? &*out_meta : nullptr;
  // Every tensor of the checked call is meta, so its device is meta, also where the construction
  // names one (a `device` param, construction-time tensors): on that device an out= buffer's meta
  // stand-in would be refused, where the real call takes the buffer (found by fuzz_op_call).
  if (!construction_.device && construction_.ctor_tensors.empty())
    return plan_->check(construction_, metas, out_arg);
  manifest::ConstructionState on_meta = construction_;
  on_meta.device = Device::meta();
  return plan_->check(on_meta, metas, out_arg);
}

std::vector<DispatchEvent> Op::explain_call(std::span<const std::optional<Tensor>> inputs,
                                            const Device& device,
                                            const std::optional<DeviceFacts>& facts) {
  std::vector<std::optional<Tensor>> metas;
  metas.reserve(inputs.size());
  for (const std::optional<Tensor>& t : inputs)
    metas.push_back(t && t->defined() ? std::optional<Tensor>(as_meta(*t)) : t);
  const manifest::SignatureCall call = plan_->check(construction_, metas);
  detail::ExplainScope scope(device, facts ? *facts : device_facts(device));
  // A meta call converts no construction-time tensor (Note [Placing construction-time tensors]).
  const BorrowedTensors borrowed(metas);
  const CallArgs args{borrowed.refs(), nullptr, call, current_stream(Device::meta()),
                      construction_.ctor_tensors};
  explain_into(args);
  return std::move(scope.events);
}

void Op::explain_into(const CallArgs& args) {
  detail::ExplainScope& scope = *detail::ExplainScope::current();
  if (args.call.empty_write()) return;  // no kernel runs for a call that writes nothing
  for (const KernelCall& kc : kernel_calls(args)) {
    const int i = interface_index(kc.interface);
    const CallSpecOps& ops = *installed_->interfaces[i].decl->call_ops;
    const std::shared_ptr<const void> placed = ops.placed(kc.spec.get(), scope.device, scope.facts);
    scope.events.push_back(dispatch_event(i, placed.get()));
  }
  if (cls_.is_composite()) forward(args);  // Note [Explaining a composite]
}

}  // namespace tileops
