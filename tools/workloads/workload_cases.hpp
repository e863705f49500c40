// Workload cases: a manifest workload row instantiated (one case per dtype case), scaled down to a
// size a CPU runs quickly, its outputs inferred by the signature, and random inputs for it. The
// `tileops` tool (run, explain, bench) and the generic op suite (tests/ops/) share this library.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/tensor_spec.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/manifest/workload.hpp"

namespace tileops::workloads {

// The builtin manifest's entry `op`; CheckError naming the op when there is none.
std::shared_ptr<const manifest::Entry> entry_of(std::string_view op);
// The signature plan of an entry: the registered class's (shared), else compiled here.
std::shared_ptr<const manifest::SignaturePlan> plan_of(
    const std::shared_ptr<const manifest::Entry>& entry);

// One instantiated case of a workload row, possibly scaled down.
struct ScaledCase {
  const manifest::WorkloadRow* row = nullptr;
  manifest::WorkloadRow scaled_row;  // the row with the scaled indices and params of the case
  manifest::WorkloadCase wcase;
  std::int64_t largest_elems = 0;  // elements of the largest tensor (input or output) of the case
  std::string scale_note;          // "" when run at the manifest's size, else what was shrunk
};

// Every case of `row`, each scaled (leading axes first, then int params that size outputs) until no
// tensor holds more than `max_elems` elements; max_elems <= 0 disables scaling.
std::vector<ScaledCase> scaled_cases(const manifest::SignaturePlan& plan,
                                     const manifest::WorkloadRow& row, std::int64_t max_elems);
// The case of the row labelled `label` (first row when empty) whose id contains `dtype` as a
// '-'-separated part (first case when empty). CheckError listing the choices when none matches.
ScaledCase pick_case(const manifest::SignaturePlan& plan, const std::string& label,
                     const std::string& dtype, std::int64_t max_elems);

// The outputs a call of the case gives, as the signature infers them from meta tensors of the
// case's inputs (the plan's own shape inference, which also serves meta calls). Throws CheckError
// when the signature refuses the case (a shape rule, inputs that disagree).
std::vector<TensorSpec> infer_outputs(const manifest::SignaturePlan& plan,
                                      const manifest::WorkloadCase& wcase);

// Why the case cannot run on `device` (a `device` param naming another device type), or nullopt.
std::optional<std::string> cannot_run_reason(const manifest::WorkloadCase& wcase, Device device);
// Points a `device` str param of the case at `device`; returns a note when it changed anything.
std::optional<std::string> retarget_device_param(manifest::WorkloadCase& wcase, Device device);

// Random inputs for the case, on `device`: floats standard normal and integers uniform in [1, 8],
// never zero after rounding to their dtype; bools uniform. Past 2^22 elements of a tensor the
// values repeat; a device's inputs are made on the host and copied up.
std::vector<std::optional<Tensor>> random_inputs(const manifest::WorkloadCase& wcase, Device device,
                                                 std::uint64_t seed);

}  // namespace tileops::workloads
