// `tileops run`: one call of a workload case on random inputs, checked against the tool's own
// float64 reference (references.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "references.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {

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
  std::vector<std::optional<HostTensor>> before;
  for (const auto& t : inputs)
    before.push_back(t ? std::optional<HostTensor>(to_host(*t)) : std::nullopt);
  CallResult result = op->call(inputs);
  fmt::print("  ran: {} outputs, roofline {} FLOPs, {} bytes\n", result.size(),
             op->eval_roofline().flops, op->eval_roofline().bytes);

  std::optional<std::vector<Expected>> expected =
      reference_outputs(entry->name, op->params(), before);
  if (!expected) {
    fmt::print("no float64 reference in the tool for {}; the call ran but is unchecked\n",
               entry->name);
    return 0;
  }
  bool pass = true;
  for (const Expected& e : *expected) {
    const Tensor* got = nullptr;
    for (std::size_t o = 0; o < entry->outputs.size() && o < result.size(); ++o)
      if (entry->outputs[o].name == e.name && result[o]) got = &*result[o];
    for (std::size_t i = 0; i < entry->inputs.size() && !got; ++i)
      if (entry->inputs[i].name == e.name && inputs[i]) got = &*inputs[i];
    if (!got) throw Error(fmt::format("run: {} produced no tensor named {}", entry->name, e.name));
    const HostTensor actual = to_host(*got);
    if (actual.values.size() != e.values.size())
      throw Error(fmt::format("run: {}: {} has {} elements, the reference {}", entry->name, e.name,
                              actual.values.size(), e.values.size()));
    const double rtol = relative_tolerance(actual.dtype), atol = absolute_tolerance(actual.dtype);
    double max_abs = 0.0, max_rel = 0.0;
    std::size_t bad = 0, worst = 0;
    double worst_excess = -1.0;
    for (std::size_t k = 0; k < e.values.size(); ++k) {
      const double err = std::abs(actual.values[k] - e.values[k]);
      const double scale = std::max(std::abs(e.values[k]), e.scale[k]);
      const double allowed = rtol * scale + atol;
      max_abs = std::max(max_abs, err);
      if (scale > 0) max_rel = std::max(max_rel, err / scale);
      if (!(err <= allowed)) {
        ++bad;
        if (err - allowed > worst_excess || std::isnan(err)) {
          worst_excess = err - allowed;
          worst = k;
        }
      }
    }
    fmt::print(
        "  {:<10} {} {}: max abs err {:.3e}, max rel err {:.3e} (rtol {:.3e}, atol {:.1e}): {}\n",
        e.name, dtype_name(actual.dtype), actual.shape.str(), max_abs, max_rel, rtol, atol,
        bad ? "FAIL" : "PASS");
    if (bad) {
      fmt::print(
          "    {} of {} elements out of tolerance; worst at flat index {}: got {}, want {}\n", bad,
          e.values.size(), worst, actual.values[worst], e.values[worst]);
      pass = false;
    }
  }
  fmt::print("{}\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

}  // namespace tileops::cli
