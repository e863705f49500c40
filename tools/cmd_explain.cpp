// `tileops explain`: why each implementation serves or refuses a workload call.
//
// Note [Explain reads dispatch events]
// Both modes print DispatchEvents (Note [Dispatch events] in tileops/op/dispatch.hpp), the
// records selection itself builds, so what explain shows cannot drift from what selection does.
// - With --device, nothing runs: the case's inputs are meta tensors of the manifest's shapes (no
//   scaling is needed, since nothing is allocated), and Op::explain_call checks the call, asks the
//   op for the kernel calls its forward would make and evaluates the implementation table for
//   each on the named device, with that device's facts stated. The facts are the accelerator's
//   when this process has one of the device's type; otherwise, for a CUDA device, those of an
//   H200 (the Hopper part the CUDA kernels are built for), and --arch, --sm-count and --smem-kib
//   override either. This is how a CPU-only machine answers "what would run on the GPU".
// - Without --device, one real call of the (scaled) case runs on random inputs on the best device
//   present (Note [CLI device choice]), and explain prints the events a dispatch sink received
//   during it: every selection the call made, its sub-ops' included, and a failed one too.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <optional>

#include "commands.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/accelerator.hpp"
#include "tileops/op/dispatch.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

// The device facts an explanation on `device` states, and where they come from.
std::pair<DeviceFacts, std::string> stated_facts(const Device& device,
                                                 const ExplainOptions& options) {
  DeviceFacts facts;
  std::string source;
  if (std::shared_ptr<const AcceleratorProvider> a = accelerator(); a && a->type == device.type) {
    facts = device_facts(device);
    source = "reported by this process's accelerator";
  } else if (device.type == DeviceType::kCUDA) {
    facts = {90, 132, std::int64_t{227} * 1024};
    source = "defaults for an H200: this process has no CUDA accelerator";
  } else {
    source = "none: not a CUDA device";
  }
  const bool overridden = options.arch >= 0 || options.sm_count >= 0 || options.smem_kib >= 0;
  if (options.arch >= 0) facts.arch = options.arch;
  if (options.sm_count >= 0) facts.sm_count = options.sm_count;
  if (options.smem_kib >= 0) facts.smem_budget = options.smem_kib * 1024;
  if (overridden) source += "; overridden by flags";
  return {facts, source};
}

// How one implementation's verdict reads in the table under its selection.
std::string verdict_text(const DispatchEvent& e, const ImplementationVerdict& v) {
  switch (v.kind) {
    case VerdictKind::kServes:
      if (e.outcome == DispatchOutcome::kSelected)
        return v.key == e.winner ? "serves: selected"
                                 : fmt::format("serves, but {} ranks above it", e.winner);
      if (e.outcome == DispatchOutcome::kAmbiguous)
        return "serves, tied: none of the serving implementations is preferred over the others";
      return "serves";
    case VerdictKind::kForcedAway:
      return fmt::format("forced away: TILEOPS_FORCE={}", e.forced);
    case VerdictKind::kWrongDevice:
    case VerdictKind::kWrongArch:
    case VerdictKind::kRefuses:
      break;
  }
  return fmt::format("{}: {}", verdict_kind_name(v.kind), v.reason);
}

void print_event(const DispatchEvent& e) {
  fmt::print("  {}.{}\n    call:   {}\n", e.instance, e.interface, e.call);
  for (const ImplementationVerdict& v : e.verdicts)
    fmt::print("    {:<28} {}\n", v.key, verdict_text(e, v));
  if (e.verdicts.empty()) fmt::print("    (no implementation is installed)\n");
  fmt::print("    {}\n", e.outcome == DispatchOutcome::kSelected ? "outcome: selected " + e.winner
                                                                 : "outcome: " + outcome_text(e));
}

void print_built(const Op& op, int depth) {
  for (const auto& i : op.op_class().interfaces()) {
    std::vector<std::string> keys;
    for (const BuiltEntry& b : op.built_entries(i.name)) {
      const auto* kernel = dynamic_cast<const Kernel*>(b.entry.get());
      const std::string detail = kernel ? kernel->detail() : std::string();
      keys.push_back(detail.empty() ? b.key : fmt::format("{} [{}]", b.key, detail));
    }
    fmt::print(
        "{:>{}}{}.{}: {}\n", "", 2 * depth + 2, op.name(), i.name,
        keys.empty() ? std::string("(nothing built)") : fmt::format("{}", fmt::join(keys, ", ")));
  }
  for (const auto& sub : op.held_delegates()) print_built(*sub, depth + 1);
}

// --device: the case on meta tensors for the named device; nothing runs.
int explain_on_device(const manifest::Entry& entry, const manifest::SignaturePlan& plan,
                      const ExplainOptions& options) {
  const Device device = Device::parse(options.device);
  ScaledCase sc = pick_case(plan, options.workload, options.dtype, 0);
  std::optional<std::string> retarget = retarget_device_param(sc.wcase, device);
  const auto [facts, source] = stated_facts(device, options);
  fmt::print("{}: workload case {} stated for {} on meta tensors (no kernel runs)\n", entry.name,
             sc.wcase.id, device.str());
  if (device.type == DeviceType::kCUDA || facts != DeviceFacts{})
    fmt::print("  device facts: arch {}, {} SMs, {} KiB shared memory per block ({})\n", facts.arch,
               facts.sm_count, facts.smem_budget / 1024, source);
  else
    fmt::print("  device facts: {}\n", source);
  if (retarget) fmt::print("  {}\n", *retarget);
  if (const char* force = std::getenv("TILEOPS_FORCE"))
    fmt::print("  TILEOPS_FORCE={} is set\n", force);
  std::vector<std::optional<Tensor>> inputs;
  for (std::size_t i = 0; i < sc.wcase.inputs.size(); ++i) {
    const auto& spec = sc.wcase.inputs[i];
    inputs.push_back(spec ? std::optional<Tensor>(Tensor::meta(spec->shape, spec->dtype))
                          : std::nullopt);
    if (spec)
      fmt::print("  input {}: {} {}\n", entry.inputs[i].name, dtype_name(spec->dtype),
                 spec->shape.str());
  }

  std::shared_ptr<Op> op = make_op(entry.name, sc.wcase.params);
  std::vector<DispatchEvent> events;
  try {
    events = op->explain_call(inputs, device, facts);
  } catch (const Error& e) {
    fmt::print("cannot state this call: {}\n", e.what());
    return 1;
  }
  fmt::print("selections ({}):\n",
             op->op_class().is_composite()
                 ? "the kernel calls of each stage, on the shapes the stage receives"
                 : "the kernel calls forward() would make");
  for (const DispatchEvent& e : events) print_event(e);
  if (events.empty()) fmt::print("  (no kernel call: the call writes nothing)\n");
  fmt::print("nothing was selected, built or cached\n");
  return 0;
}

// No --device: one real call of the case on the best device present.
int explain_one_call(const manifest::Entry& entry, const manifest::SignaturePlan& plan,
                     const ExplainOptions& options) {
  ScaledCase sc = pick_case(plan, options.workload, options.dtype, options.max_elems);
  const Device device = choose_device();
  std::optional<std::string> retarget = retarget_device_param(sc.wcase, device);
  fmt::print("{}: workload case {} on {}\n", entry.name, sc.wcase.id, device.str());
  if (!sc.scale_note.empty()) fmt::print("  {}\n", sc.scale_note);
  if (retarget) fmt::print("  {}\n", *retarget);
  if (const char* force = std::getenv("TILEOPS_FORCE"))
    fmt::print("  TILEOPS_FORCE={} is set\n", force);

  std::shared_ptr<Op> op = make_op(entry.name, sc.wcase.params);
  std::vector<std::optional<Tensor>> inputs = random_inputs(sc.wcase, device, options.seed);
  std::vector<DispatchEvent> events;
  std::string error;
  {
    ScopedDispatchSink sink([&](const DispatchEvent& e) { events.push_back(e); });
    try {
      op->call(inputs);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  fmt::print("selections (the dispatch events of one call):\n");
  for (const DispatchEvent& e : events) print_event(e);
  if (events.empty())
    fmt::print("  (no kernel was selected: a target or an empty result served the call)\n");
  if (!error.empty()) {
    fmt::print("the call failed: {}\n", error);
    return 1;
  }
  if (std::optional<Target> t = op->serving_target()) fmt::print("serving target: {}\n", t->str());
  fmt::print("built entries:\n");
  print_built(*op, 0);
  return 0;
}

}  // namespace

int run_explain(const ExplainOptions& options) {
  auto entry = entry_of(options.op);
  auto plan = plan_of(entry);
  register_builtin_ops();
  if (!find_op_class(entry->name)) {
    fmt::print("{}: no op class is registered (status {}); nothing to explain\n", entry->name,
               entry->status);
    return 1;
  }
  return options.device.empty() ? explain_one_call(*entry, *plan, options)
                                : explain_on_device(*entry, *plan, options);
}

}  // namespace tileops::cli
