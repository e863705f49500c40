// The seven steps of a call, target selection and failure and undo (docs/seeds.md,
// construction-and-calls Table 3, §4 and §6).
#include <fmt/format.h>

#include <utility>

#include "op/backend_registry.hpp"
#include "op/binding.hpp"
#include "op/call_device.hpp"
#include "op/call_stack.hpp"
#include "op/explain_scope.hpp"
#include "op/read_section.hpp"
#include "op/record_pool.hpp"
#include "tileops/op/op.hpp"

#if TILEOPS_WITH_CUDA
#include "cuda/runtime.hpp"
#endif

namespace tileops {
namespace {

// TILEOPS_NVTX=1 wraps each op call (sub-ops' included) in an NVTX range named after the op, in
// CUDA builds; unset, it costs the test of one flag read once per process.
class NvtxRange {
 public:
#if TILEOPS_WITH_CUDA
  explicit NvtxRange(const std::string& name) : on_(cuda::nvtx_enabled()) {
    if (on_) cuda::nvtx_push(name.c_str());
  }
  ~NvtxRange() {
    if (on_) cuda::nvtx_pop();
  }

 private:
  bool on_;
#else
  explicit NvtxRange(const std::string&) {}
#endif
};

}  // namespace

manifest::StageCalls Op::file_by_stage(
    const std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>>&
        sub_calls) const {
  manifest::StageCalls stages;
  for (const StageDecl& s : cls_.stages())
    stages.emplace_back(s.name, std::vector<std::shared_ptr<const manifest::SignatureCall>>{});
  std::lock_guard<std::mutex> lock(running_mutex_);
  for (const auto& [sub, record] : sub_calls) {
    auto it = delegate_stages_.find(sub);
    if (it == delegate_stages_.end())
      throw RuntimeStateError(
          fmt::format("{}: {} completed a call inside this call but is not held through "
                      "delegate_for, so its call cannot be filed under a stage",
                      name(), sub->name()));
    for (auto& [stage, calls] : stages)
      if (stage == it->second) calls.push_back(record);
  }
  return stages;
}

CallResult Op::call(std::span<const std::optional<Tensor>> inputs, const CallOptions& options) {
  return run_call(BorrowedTensors(inputs).refs(), options);
}

CallResult Op::call_borrowed(TensorRefs inputs, const CallOptions& options) {
  return run_call(inputs, options);
}

CallResult Op::run_call(TensorRefs inputs, const CallOptions& options) {
  detail::ReadSection reading;    // Note [Binding reclamation]: the call reads a binding group
  detail::CallFrame frame(this);  // step 1
  const NvtxRange range(name());
  bool bound_here = false;
  std::unique_ptr<manifest::SignatureCall> filling = records_->take();  // Note [Record reuse]
  try {
    const Tensor* out = options.out && options.out->defined() ? &*options.out : nullptr;
    // Step 2. A call whose device nothing else decides runs on the accelerator's current device.
    plan_->check_into(*filling, construction_, inputs, out, &current_accelerator_device);
    const manifest::SignatureCall& call = *filling;
    const std::optional<Device> device = call.device();
    // See Note [Call device scope]: the device current and the stream resolved for the whole call.
    const detail::CallDeviceScope scope(name(), call, inputs, options.stream);
    // Most ops have no construction-time tensors: no call, no vector returned.
    std::vector<std::optional<Tensor>> ctor_tensors;
    if (!construction_.ctor_tensors.empty()) ctor_tensors = place_ctor_tensors(call);
    CallArgs args{inputs, out, call, scope.stream(), ctor_tensors};
    const bool meta = device && device->is_meta();
    // Built in place from whichever step produces it: a CallResult holds its tensors inline, so
    // each move of it costs as much as the tensors do.
    CallResult result = [&] {
      // The fake path: the check and the record, outputs of the inferred shape, no kernel, no
      // target.
      if (meta || call.empty_write()) return empty_result(args);  // step 3 for an empty write
      detail::Binding* b = binding_fast_.load(std::memory_order_seq_cst);
      if (!b->resolved.load(std::memory_order_acquire)) {  // step 4
        bound_here = bind_target(call, b);
      }
      // `builder` is read only once `resolved` is seen: a call that could not select (no device)
      // must not read it while another call is selecting.
      const bool on_target = b->resolved.load(std::memory_order_acquire) && b->builder;
      return on_target ? run_target(args, *b) : forward(args);  // step 5
    }();
    if (meta && detail::ExplainScope::current()) {
      // A stage of a composite being explained: explained, not recorded (Note [Explaining a
      // composite] in op_explain.cpp).
      explain_into(args);
      records_->give_back(std::move(filling));
      return result;
    }
    plan_->check_result(call, inputs, out, result);  // step 6

    // Step 7: file the sub-ops' calls under their stages, pop, keep, report.
    if (!cls_.stages().empty() || !frame.sub_calls().empty())
      filling->file_stages(file_by_stage(frame.sub_calls()));
    keep_record(frame, std::move(filling));
    return result;
  } catch (const std::exception&) {
    // Table 6: undo the target selection this call made; last_call stays.
    if (bound_here) reset_binding();
    if (filling) records_->give_back(std::move(filling));
    if (const Op* parent = frame.enclosing_op()) parent->rethrow_in_stage(*this);
    throw;
  }
}

// Note [Lazy publication]
// last_call() hands out the record as a shared_ptr, but most calls' records are never asked for:
// making each one shared cost a control block (malloc and free), a lock of the pool's weak
// reference, the deleter's hand-back and the mutex around last_call_: about ten atomic operations
// and, for AddFwdOp, 285 of 2,337 instructions per cache-hit call. So a call keeps its record
// unshared in unpublished_, one atomic exchange; the record it displaces was never seen by anyone
// and goes straight back to the pool. last_call() and eval_roofline() share the newest record under
// running_mutex_ when they first ask for it (published_last_call), and it is then last_call_ like
// any published record, returned to the pool by its last holder (Note [Record reuse] in
// src/op/record_pool.hpp). "Last" is the order of the exchanges, as it was the order of taking the
// mutex. A sub-op's call inside a composite is shared at once: its parent files it under a stage.
void Op::keep_record(detail::CallFrame& frame, std::unique_ptr<manifest::SignatureCall> record) {
  if (frame.enclosed()) {
    std::shared_ptr<const manifest::SignatureCall> shared = records_->publish(std::move(record));
    frame.complete(shared);
    std::shared_ptr<const manifest::SignatureCall> previous;  // released after the lock
    std::unique_ptr<manifest::SignatureCall> displaced;
    {
      std::lock_guard<std::mutex> lock(running_mutex_);
      displaced.reset(unpublished_.exchange(nullptr, std::memory_order_acq_rel));
      previous = std::exchange(last_call_, std::move(shared));
    }
    if (displaced) records_->give_back(std::move(displaced));
    return;
  }
  frame.complete(nullptr);
  std::unique_ptr<manifest::SignatureCall> displaced(
      unpublished_.exchange(record.release(), std::memory_order_acq_rel));
  if (displaced) records_->give_back(std::move(displaced));
}

bool Op::bind_target(const manifest::SignatureCall& call, detail::Binding*& binding) {
  std::lock_guard<std::mutex> lock(binding_mutex_);
  binding = binding_.get();
  detail::Binding& b = *binding_;
  if (b.resolved) return false;
  std::optional<Target> chosen = detail::select_target(target_, call.device(), name());
  if (!chosen)
    return false;  // no device to detect from: the body runs, the next call selects again
  if (!chosen->is_builtin()) {
    if (std::optional<KernelBuilder> builder = detail::find_builder(name(), chosen->name())) {
      b.builder = std::move(builder);
    } else if (!(cls_.is_composite() && cls_.kernel_types().empty())) {
      throw OpNotAvailableError(
          fmt::format("{}: target '{}' registers no kernel builder for {}; targets that do: {}. "
                      "There is no fall back to the "
                      "in-tree implementation: pass target=BUILTIN to run it{}",
                      name(), chosen->name(), name(), detail::targets_for(name()),
                      detail::load_failure_note()));
    }
  }
  // A composite without its own kernels runs its composition under any target; the in-tree
  // path reports BUILTIN as the serving target (docs/framework.md, Composite ops).
  b.serving = b.builder ? chosen : std::optional<Target>(Target::builtin());
  b.resolved.store(true, std::memory_order_release);
  return true;
}

CallResult Op::run_target(const CallArgs& args, detail::Binding& binding) {
  detail::Binding* b = &binding;
  detail::TargetKey key{args.device(), {}};
  for (const auto& in : args.inputs)
    key.inputs.push_back(in && in->defined()
                             ? std::optional<std::pair<DType, Shape>>({in->dtype(), in->shape()})
                             : std::nullopt);
  std::shared_ptr<detail::BuiltTargetKernel> kernel;
  {
    std::shared_lock<std::shared_mutex> lock(b->target_mutex);
    auto it = b->target_kernels.find(key);
    if (it != b->target_kernels.end()) kernel = it->second;
  }
  if (!kernel) {
    std::lock_guard<std::mutex> build_lock(b->build_mutex);
    {
      std::shared_lock<std::shared_mutex> lock(b->target_mutex);
      auto it = b->target_kernels.find(key);
      if (it != b->target_kernels.end()) kernel = it->second;
    }
    if (!kernel) {
      std::vector<std::optional<TensorSpec>> specs;
      for (const auto& in : args.inputs)
        specs.push_back(in && in->defined() ? std::optional<TensorSpec>(TensorSpec{
                                                  in->device(), in->dtype(), in->shape()})
                                            : std::nullopt);
      CurrentDeviceGuard guard(args.call.device());
      auto built = std::make_shared<detail::BuiltTargetKernel>((*b->builder)(specs, params_));
      if (!built->kernel.run)
        throw OpNotAvailableError(
            fmt::format("{}: target '{}' built a kernel for {} that is not callable", name(),
                        b->serving ? b->serving->str() : "?", name()));
      // A tuning request reaches the kernel with its device current, whenever it comes
      // (docs/seeds.md, construction-and-calls §5), not only while it is built.
      if (built->kernel.request_tune)
        built->kernel.request_tune = [tune = std::move(built->kernel.request_tune),
                                      device = args.call.device()] {
          CurrentDeviceGuard on_device(device);
          tune();
        };
      {
        std::unique_lock<std::shared_mutex> lock(b->target_mutex);
        kernel = b->target_kernels.emplace(key, std::move(built)).first->second;
      }
      // Tuned after it is published: a request_tune racing with this build either finds the
      // kernel or its flag is seen here (Note [Tuning while building] in op_kernels.cpp).
      if (tune_requested_.load()) tune_target_kernel(*kernel, *b);
    }
  }
  // The base class guarantees the target contiguous inputs where it does not write them.
  std::vector<std::optional<Tensor>> inputs;
  inputs.reserve(args.inputs.size());
  for (const Tensor* in : args.inputs)
    inputs.push_back(in ? std::optional<Tensor>(*in) : std::nullopt);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] && !args.call.writes_input(i) && !inputs[i]->is_contiguous())
      inputs[i] = inputs[i]->contiguous();
  }
  return kernel->kernel.run(TargetCall{inputs, args.out, &args.stream, args.ctor_tensors});
}

// Note [Placing construction-time tensors]: a construction-time tensor is moved to the call
// device (unless it declares `device: cpu`) and cast to the dtype the call gives it (Note [Ctor
// tensor dtypes] in plan_build.cpp). The conversion is written back to the instance (running
// group) so that the next call on the same device and dtype converts nothing; it is always made
// from the tensor given at construction, so alternating dtypes never compound rounding. A meta
// call converts nothing (the fake path reads no values).
std::vector<std::optional<Tensor>> Op::place_ctor_tensors(const manifest::SignatureCall& call) {
  const std::vector<std::optional<Tensor>>& given = construction_.ctor_tensors;
  std::vector<std::optional<Tensor>> placed;
  if (given.empty()) return placed;
  placed.reserve(given.size());
  const std::optional<Device> device = call.device();
  std::size_t i = 0;
  for (const manifest::ParamDecl& p : plan_->entry().params) {
    if (!p.tensor) continue;
    const std::optional<Tensor>& original = given[i];
    const DType dtype = call.tensors()[i].dtype;
    ++i;
    if (!original || (device && device->is_meta())) {
      placed.push_back(original);
      continue;
    }
    const Device where = p.tensor->cpu_only ? Device::cpu() : device.value_or(original->device());
    if (original->device() == where && original->dtype() == dtype) {
      placed.push_back(original);
      continue;
    }
    std::optional<Tensor>& cached = placed_ctor_tensors_[i - 1];
    {
      std::lock_guard<std::mutex> lock(running_mutex_);
      if (cached && cached->device() == where && cached->dtype() == dtype) {
        placed.push_back(cached);
        continue;
      }
    }
    Tensor converted = original->to(where, dtype);
    {
      std::lock_guard<std::mutex> lock(running_mutex_);
      cached = converted;
    }
    placed.push_back(std::move(converted));
  }
  return placed;
}

CallResult Op::empty_result(const CallArgs& args) const {
  CallResult result;
  for (std::size_t o = 0; o < plan_->entry().outputs.size(); ++o) {
    const manifest::TensorRecord& rec = args.call.output(o);
    if (args.device().is_meta()) {
      const manifest::TensorDecl& decl = plan_->entry().outputs[o];
      if (decl.buffer_out && args.out) {
        result.emplace_back(*args.out);
        continue;
      }
      bool aliased = false;
      if (!decl.alias.empty()) {
        for (std::size_t k = 0; k < plan_->entry().inputs.size(); ++k)
          if (plan_->entry().inputs[k].name == decl.alias && args.call.writes_input(k)) {
            result.emplace_back(args.input(k));
            aliased = true;
          }
      }
      if (!aliased) result.emplace_back(Tensor::meta(rec.shape, rec.dtype));
      continue;
    }
    result.emplace_back(allocate_output(args, o));
  }
  return result;
}

}  // namespace tileops
