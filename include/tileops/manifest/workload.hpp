// Instantiating a manifest workload row (docs/manifest.md §2): the construction params and the
// input shapes and dtypes of each of its dtype cases. The validator checks every row this way and
// the benchmark driver sizes its inputs from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tileops/core/tensor_spec.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/signature_plan.hpp"

namespace tileops::manifest {

struct WorkloadCase {
  std::string
      id;  // label, then each dtype case value in forall order, then dtype params, joined by '-'
  ParamMap params;
  std::vector<std::optional<TensorSpec>> inputs;  // signature order; nullopt for an omitted input
  // Per input, in signature order: for an input with a `values: group_ends(<Dim>)` hint, the Dim's
  // value in this case, where its random group ends must finish; nullopt for the others.
  std::vector<std::optional<std::int64_t>> group_ends;
};

// One case per dtype case of the row (one case when the entry has no DType index). Input devices
// are left at their default (CPU); callers place tensors where they run. Throws CheckError when
// the row does not instantiate (a missing index, a shape the signature refuses).
std::vector<WorkloadCase> instantiate_workload(const SignaturePlan& plan, const WorkloadRow& row);

}  // namespace tileops::manifest
