// Op: the base class of every operator, as the seeds describe it (docs/seeds.md); the decisions
// beyond them are in docs/framework.md.
//
// Construction runs construction-and-calls Table 1: load the backend registry, check the params
// against the manifest, install the implementation table (with its contract checks), register the
// instance key, build the empty binding and running state. No device is probed and no kernel
// selected.
//
// Every call — the typed operator() of a subclass and the generic call() — goes through
// run_call, the seven steps of Table 3: begin, check the signature, detect an empty write, select
// the target, run (empty result, target kernel or forward), check the result, record. A call
// that fails undoes the target selection it made (Table 6).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/signature_call.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/op/accelerator.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/op/dispatch.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/op_class.hpp"
#include "tileops/op/target.hpp"

namespace tileops {

namespace detail {
struct Binding;
struct BuiltTargetKernel;
struct InstalledTable;
class RecordPool;
class CallFrame;
}  // namespace detail

struct CallOptions {
  std::optional<Tensor> out;
  const Stream* stream = nullptr;  // nullptr: the current stream of the call's device
};

// What forward() receives: the checked call.
struct CallArgs {
  TensorRefs inputs;                    // signature order, borrowed (Note [Borrowed call inputs])
  const Tensor* out = nullptr;          // the out buffer, when passed
  const manifest::SignatureCall& call;  // the record of the signature check
  Stream stream;
  // The construction-time tensors, in declaration order, placed on the call device with the
  // call's dtypes (Note [Placing construction-time tensors] in op_call.cpp).
  std::span<const std::optional<Tensor>> ctor_tensors = {};

  bool has(std::size_t i) const { return i < inputs.size() && inputs[i] && inputs[i]->defined(); }
  const Tensor& input(std::size_t i) const { return *inputs[i]; }
  const Tensor* optional_input(std::size_t i) const { return has(i) ? &*inputs[i] : nullptr; }
  Device device() const { return call.device().value_or(Device::cpu()); }
  // The context the call's kernels receive: its device, stream and the device's facts.
  KernelContext context() const { return {device(), stream, device_facts(device())}; }
};

// A kernel call forward() makes, stated without running it: the interface and its call spec
// (Op::kernel_calls, which Op::explain_call reads on meta tensors).
struct KernelCall {
  std::type_index interface = typeid(void);
  std::shared_ptr<const void> spec;  // the interface's call spec

  template <class I>
  static KernelCall of(typename I::Call call) {
    return {typeid(I), std::make_shared<const typename I::Call>(std::move(call))};
  }
};
using KernelCalls = std::vector<KernelCall>;

// One built entry of an interface (built_entries()).
struct BuiltEntry {
  std::string key;  // the implementation's key, or the target's cache key for a target kernel
  Identity identity;
  std::shared_ptr<KernelInterface> entry;
};

// Note [Owned instances]
// The instance registry maps keys to live instances (find_instance). The compile boundary's torch
// operators run an instance found by its key on whatever thread torch calls them from, while the
// instance's owner may release it on another; a raw pointer from the registry could outlive it.
// So the registry hands out ownership: an Op is enable_shared_from_this, and find_instance returns
// a std::shared_ptr that keeps the instance alive for the call. The registry itself stays weak
// (it owns nothing), and an instance that no std::shared_ptr owns (made on the stack or in a
// std::unique_ptr) is not handed out: nothing could keep it alive. The Python package makes every
// instance in a std::shared_ptr.
class Op : public std::enable_shared_from_this<Op> {
 public:
  virtual ~Op();
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  const OpClass& op_class() const noexcept { return cls_; }
  const std::string& name() const noexcept { return cls_.name(); }
  // "<ClassName>#<n>": process-unique, never reused.
  const std::string& instance_key() const noexcept { return instance_key_; }
  // The construction params, checked, with defaults filled in.
  const ParamMap& params() const noexcept { return params_; }
  const Value& param(std::string_view name) const { return params_.at(name); }
  const std::optional<Target>& target() const noexcept { return target_; }

  // The generic call: inputs in signature order (nullopt for an omitted optional input); the
  // outputs in signature order.
  CallResult call(std::span<const std::optional<Tensor>> inputs, const CallOptions& options = {});
  // The same call with the inputs borrowed (null for an omitted optional input), which copies no
  // tensor (Note [Borrowed call inputs] in tileops/core/tensor.hpp): the generated classes' call.
  CallResult call_borrowed(TensorRefs inputs, const CallOptions& options = {});

  // The record of the last completed call; RuntimeStateError before one.
  std::shared_ptr<const manifest::SignatureCall> last_call() const;
  // The target serving this instance (BUILTIN for the in-tree kernels); nullopt before selection.
  std::optional<Target> serving_target() const;
  // The roofline of last_call().
  manifest::RooflineResult eval_roofline() const;
  // The effect branch a call with these inputs present (and out passed or not) takes.
  manifest::EffectBranch effect_branch(std::span<const std::optional<Tensor>> inputs,
                                       bool has_out) const;

  // Held sub-ops in stage order, then insertion order within a stage.
  std::vector<std::shared_ptr<Op>> held_delegates() const;
  // Entries built under `interface` (or, when a target serves the op, every kernel it built).
  std::vector<BuiltEntry> built_entries(std::string_view interface) const;
  // How many call specs the call-spec cache of `interface` holds (the kernel_for hit table): a
  // diagnostic of how many distinct keys the calls so far made.
  std::size_t cached_call_specs(std::string_view interface) const;
  // Every Kernel in this op's and its held sub-ops' built entries, each once.
  std::vector<std::shared_ptr<Kernel>> iter_kernels() const;
  // Puts this op and its held sub-ops in tuned mode and tunes what they have built.
  void request_tune();
  bool tune_requested() const noexcept { return tune_requested_.load(); }

  // The entry of `I` serving `call`; builds it on the first call of its identity.
  template <class I>
  std::shared_ptr<I> kernel_for(const typename I::Call& call) {
    return std::static_pointer_cast<I>(entry_slot<I>(call));
  }
  // The key selection picks for `call` under `interface` (docs/framework.md), without building.
  // ContractError when `call` is not the interface's call spec type. Like a kernel_for miss, it
  // publishes its dispatch event (Note [Dispatch events] in dispatch.hpp).
  template <class Call>
  std::string key_for(std::string_view interface, const Call& call) const {
    return select_key(interface_taking(interface, typeid(Call)), &call);
  }
  // Every key's applicability to `call`, TILEOPS_FORCE aside: "" when it serves, else its reason.
  template <class Call>
  std::vector<std::pair<std::string, std::string>> verdicts(std::string_view interface,
                                                            const Call& call) const {
    return key_verdicts(interface_taking(interface, typeid(Call)), &call);
  }

  // Resets the binding group (the target selection and every cache built under it), recursively
  // through the held sub-ops, each op once (a sub-op may hold its parent back).
  void reset_binding();

  // What selection would decide for a call of `inputs` placed on `device`, without running it
  // (`tileops explain --device`): runs the signature check, asks the op for its kernel calls
  // (kernel_calls) and evaluates the installed table for each on `device` with `facts` (nullopt:
  // the facts the process's accelerator reports for `device`), TILEOPS_FORCE included. One event
  // per kernel call, in the order forward() makes them; none for a call that writes nothing.
  // Nothing is selected, built or cached, the binding group is not read and no sink hears the
  // events. Each input counts as a meta tensor of its geometry (its data and device are never
  // read), so the call specs see contiguous, aligned meta tensors for contiguous inputs. A
  // composite explains its stages (Note [Explaining a composite] in op_explain.cpp).
  std::vector<DispatchEvent> explain_call(std::span<const std::optional<Tensor>> inputs,
                                          const Device& device,
                                          const std::optional<DeviceFacts>& facts = std::nullopt);

  // The signature check of a call alone, on meta tensors of the inputs' (and out's) geometry: the
  // record of what the call would be (output shapes and dtypes, written inputs), with nothing
  // kept, selected or run, and last_call() unchanged. What a tracing framework's fake kernel asks
  // (docs/python.md, the compile boundary); a bad call raises as a real one would.
  manifest::SignatureCall check_call(std::span<const std::optional<Tensor>> inputs,
                                     const Tensor* out = nullptr) const;

 protected:
  // `ctor_tensors`: the construction-time tensors, in the order the manifest declares them.
  Op(const OpClass& cls, ParamMap params, std::optional<Target> target = std::nullopt,
     std::span<const std::optional<Tensor>> ctor_tensors = {});

  // The op's computation, called when no target serves the instance.
  virtual CallResult forward(const CallArgs& args) = 0;
  // The kernel calls forward() makes for `args`, without making them: the op's call-spec
  // builder, which forward() uses too. A composite, whose sub-ops select their own kernels,
  // states none.
  virtual KernelCalls kernel_calls(const CallArgs& args) const;

  // The one way to hold a sub-op (docs/seeds.md, composite-ops §1): one (stage, identity) is built
  // once, with this op's target, or `given` is held as passed.
  template <class T>
  T& delegate_for(std::string_view stage, Identity identity, std::shared_ptr<T> given = nullptr,
                  const ParamMap& params = {}) {
    return static_cast<T&>(
        hold_delegate(stage, std::move(identity), std::move(given), params, typeid(T)));
  }

  // kernel_for for a forward(): the entry by reference, which stays valid until the call returns
  // (the call's read section keeps the binding that holds it alive, Note [Binding reclamation]),
  // so a cache hit copies no shared_ptr.
  template <class I>
  I& kernel_entry(const typename I::Call& call) {
    return static_cast<I&>(*entry_slot<I>(call));
  }

  // Allocates output `i` of the call on the call device (contiguous, from the device allocator).
  Tensor allocate_output(const CallArgs& args, std::size_t i) const;

 private:
  friend struct detail::Binding;
  // The cached entry of `I` for `call`: the call-spec table's own slot, which lives as long as the
  // binding that holds it.
  template <class I>
  const std::shared_ptr<KernelInterface>& entry_slot(const typename I::Call& call) {
    if (call.stated_facts) refuse_stated_facts(typeid(I));
    if (!call.device) {
      if (std::optional<Device> current = current_accelerator_device()) {
        typename I::Call on_device = call;
        on_device.device = current;
        return entry_for_call(typeid(I), &on_device);
      }
    }
    return entry_for_call(typeid(I), &call);
  }
  const std::shared_ptr<KernelInterface>& entry_for_call(std::type_index interface,
                                                         const void* call);
  int interface_index(std::type_index interface) const;
  int interface_index(std::string_view interface) const;
  // interface_index, after checking that `call` is the type of the interface's call spec.
  int interface_taking(std::string_view interface, std::type_index call) const;
  // The selection's event for `call` under `interface` (Note [Dispatch events]).
  DispatchEvent dispatch_event(int interface, const void* call) const;
  // Selects for `call`: publishes the event, returns the winner or raises the selection's error.
  std::string select_key(int interface, const void* call) const;
  std::vector<std::pair<std::string, std::string>> key_verdicts(int interface,
                                                                const void* call) const;
  [[noreturn]] void refuse_stated_facts(std::type_index interface) const;
  Op& hold_delegate(std::string_view stage, Identity identity, std::shared_ptr<Op> given,
                    const ParamMap& params, std::type_index type);

  CallResult run_call(TensorRefs inputs, const CallOptions& options);
  // last_call_, after sharing the record of a newer call no one has asked for; running_mutex_
  // held.
  const std::shared_ptr<const manifest::SignatureCall>& published_last_call() const;
  // Step 7's keeping of the call's record as last_call (Note [Lazy publication]).
  void keep_record(detail::CallFrame& frame, std::unique_ptr<manifest::SignatureCall> record);
  // Called in a sub-op's handler: rethrows the library error in flight as the same type, its
  // message prefixed with this composite and the stage that holds `sub`; returns for any other
  // exception or an op this one does not hold (Note [Errors inside a stage]).
  void rethrow_in_stage(const Op& sub) const;
  // Step 4 on the current binding, which it stores in `binding` (the call then runs on that one,
  // even if another thread resets the binding meanwhile). True when this call made the selection.
  bool bind_target(const manifest::SignatureCall& call, detail::Binding*& binding);
  // Runs the kernel of the target bound in `binding` (the binding the call read: a concurrent
  // reset_binding must not swap it under the call).
  CallResult run_target(const CallArgs& args, detail::Binding& binding);
  CallResult empty_result(const CallArgs& args) const;
  // explain_call on checked meta `args`: appends their events to the thread's explain scope.
  void explain_into(const CallArgs& args);
  // The construction-time tensors as `call` needs them (empty when the op declares none).
  std::vector<std::optional<Tensor>> place_ctor_tensors(const manifest::SignatureCall& call);
  // Files the calls sub-ops completed inside this call under their stages (Table 3, step 7).
  manifest::StageCalls file_by_stage(
      const std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>>&
          sub_calls) const;
  // Sends a target's kernel its tuning request, once; warns once per op when it cannot tune.
  void tune_target_kernel(detail::BuiltTargetKernel& kernel, const detail::Binding& binding);
  std::shared_ptr<detail::Binding> binding() const;
  // Swaps this op's binding group for a fresh one and frees the retired groups no read section
  // can still be inside (Note [Binding reclamation] in src/op/read_section.hpp).
  void retire_binding();

  // Construction group (never written after construction).
  const OpClass& cls_;
  std::shared_ptr<const manifest::SignaturePlan> plan_;
  ParamMap params_;
  std::optional<Target> target_;
  manifest::ConstructionState construction_;
  std::shared_ptr<const detail::InstalledTable> installed_;
  std::string instance_key_;

  // Binding group: replaced whole by reset_binding (Note [Binding group] in src/op/binding.hpp).
  mutable std::mutex binding_mutex_;
  std::shared_ptr<detail::Binding> binding_;
  std::atomic<detail::Binding*> binding_fast_{nullptr};  // read inside a detail::ReadSection
  // Retired groups with the epoch they were retired at, kept while a read section may be inside
  // them (Note [Binding reclamation] in src/op/read_section.hpp).
  std::vector<std::pair<std::shared_ptr<detail::Binding>, std::uint64_t>> retired_bindings_;

  // Running group.
  mutable std::mutex running_mutex_;
  // Per construction-time tensor, its last conversion for a call (the write-back).
  std::vector<std::optional<Tensor>> placed_ctor_tensors_;
  std::vector<std::pair<std::string, std::vector<std::pair<Identity, std::shared_ptr<Op>>>>>
      delegates_;
  std::unordered_map<const Op*, std::string> delegate_stages_;
  mutable std::shared_ptr<const manifest::SignatureCall> last_call_;
  // The last call's record while nobody has asked for it (Note [Lazy publication] in
  // src/op/op_call.cpp): newer than last_call_ when set.
  mutable std::atomic<manifest::SignatureCall*> unpublished_{nullptr};
  // Records nobody holds any more, refilled by later calls (Note [Record reuse]).
  std::shared_ptr<detail::RecordPool> records_;
  std::atomic<bool> tune_requested_{false};
  std::atomic<bool> tune_warned_{false};
};

// The instance registry: key -> live instance (the compile boundary looks instances up by key).
// The instance of `key`, owned (Note [Owned instances]): the handle keeps it alive. nullptr when no
// live instance has the key, or when the instance is not owned by a std::shared_ptr.
std::shared_ptr<Op> find_instance(std::string_view key);

}  // namespace tileops
