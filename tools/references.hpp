// Independent float64 references for the ops the library implements on the CPU (`tileops run`).
// They are written from the manifest's semantics (docs/manifest.md §4), not from the library's
// kernels, so that a wrong kernel and a wrong reference would have to agree by accident.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/value.hpp"
#include "workload_inputs.hpp"

namespace tileops::cli {

// The expected values of one tensor the call produces: an output, or an input the call writes.
struct Expected {
  std::string name;
  std::vector<double> values;
  // Per element, the magnitude the tolerance scales with: |value| for a well-conditioned result,
  // larger where the exact result cancels (a sum's sum of |terms|, a centered value's |x| +
  // |mean|).
  std::vector<double> scale;
};

// The reference of `op` for these construction params and inputs (signature order, nullopt for
// an omitted optional input); nullopt when the tool has no reference for the op.
std::optional<std::vector<Expected>> reference_outputs(
    std::string_view op, const ParamMap& params,
    const std::vector<std::optional<HostTensor>>& inputs);

// The CPU tolerance policy (relative): float32 1e-5, float16 2^-10, bfloat16 2^-7; integers exact.
double relative_tolerance(DType dtype);
// The absolute floor added to the tolerance (float32 1e-6, narrow floats 1e-5, integers 0).
double absolute_tolerance(DType dtype);

}  // namespace tileops::cli
