// `tileops run`: one call of a workload case on random inputs, checked against the tool's own
// float64 reference (references/).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "references.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

// The references read host memory: a device tensor is copied down first.
Tensor on_host(const Tensor& t) { return t.device().is_cpu() ? t : t.to(Device::cpu(), t.dtype()); }

}  // namespace

int run_run(const CaseOptions& options) {
  auto entry = entry_of(options.op);
  auto plan = plan_of(entry);
  register_builtin_ops();
  if (!find_op_class(entry->name)) {
    fmt::print("{}: no op class is registered (status {}); nothing to run\n", entry->name,
               entry->status);
    return 1;
  }
  ScaledCase sc = pick_case(*plan, options.workload, options.dtype, options.max_elems);
  const Device device = choose_device();
  std::optional<std::string> retarget = retarget_device_param(sc.wcase, device);
  fmt::print("{}: workload case {} on {}, seed {}\n", entry->name, sc.wcase.id, device.str(),
             options.seed);
  if (!sc.scale_note.empty()) fmt::print("  {}\n", sc.scale_note);
  if (retarget) fmt::print("  {}\n", *retarget);
  for (std::size_t i = 0; i < sc.wcase.inputs.size(); ++i)
    if (const auto& spec = sc.wcase.inputs[i])
      fmt::print("  input {}: {} {}\n", entry->inputs[i].name, dtype_name(spec->dtype),
                 spec->shape.str());

  std::shared_ptr<Op> op = make_op(entry->name, sc.wcase.params);
  std::vector<std::optional<Tensor>> inputs = random_inputs(sc.wcase, device, options.seed);
  // The reference reads the inputs as they were before the call (the call may write some).
  references::Inputs before;
  for (const auto& t : inputs)
    before.push_back(t ? std::optional<references::HostTensor>(references::to_host(on_host(*t)))
                       : std::nullopt);
  CallResult result = op->call(inputs);
  fmt::print("  ran: {} outputs, roofline {} FLOPs, {} bytes\n", result.size(),
             op->eval_roofline().flops, op->eval_roofline().bytes);

  const references::Reference reference = references::find_reference(entry->name);
  if (!reference) {
    fmt::print("no float64 reference for {}; the call ran but is unchecked\n", entry->name);
    return 0;
  }
  bool pass = true;
  for (const references::Expected& e : reference(op->params(), before)) {
    const Tensor* got = nullptr;
    for (std::size_t o = 0; o < entry->outputs.size() && o < result.size(); ++o)
      if (entry->outputs[o].name == e.name && result[o]) got = &*result[o];
    for (std::size_t i = 0; i < entry->inputs.size() && !got; ++i)
      if (entry->inputs[i].name == e.name && inputs[i]) got = &*inputs[i];
    if (!got) throw Error(fmt::format("run: {} produced no tensor named {}", entry->name, e.name));
    const references::HostTensor actual = references::to_host(on_host(*got));
    const references::Tolerance tol = references::tolerance(actual.dtype);
    const references::Comparison c = references::compare(actual.values, e, tol);
    fmt::print(
        "  {:<10} {} {}: max abs err {:.3e}, max rel err {:.3e} (rtol {:.3e}, atol {:.1e}): {}\n",
        e.name, dtype_name(actual.dtype), actual.shape.str(), c.max_abs_error, c.max_rel_error,
        tol.rtol, tol.atol, c.ok() ? "PASS" : "FAIL");
    if (!c.ok()) {
      fmt::print("    {}\n", c.str(actual.values, e.values, tol));
      pass = false;
    }
  }
  fmt::print("{}\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

}  // namespace tileops::cli
