// Helpers shared by the manifest-layer tests: toy plans loaded from YAML text, tensors on the
// devices a check cares about, and the text of the CheckError a call raises.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/test_helpers.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/signature_plan.hpp"

namespace tileops::manifest::testing {

using Inputs = std::vector<std::optional<Tensor>>;

// The plan of `op` in a manifest file loaded from `yaml` (the file is named after its family).
inline std::shared_ptr<const SignaturePlan> plan_from(std::string_view yaml, std::string_view op,
                                                      std::string_view file = "toy.yaml") {
  Manifest m = Manifest::load_string(file, yaml);
  for (const auto& e : m.entries())
    if (e->name == op) return SignaturePlan::build(e);
  ADD_FAILURE() << op << " is not in the toy manifest";
  return nullptr;
}

inline std::shared_ptr<const SignaturePlan> builtin_plan(std::string_view op) {
  for (const auto& e : Manifest::builtin().entries())
    if (e->name == op) return SignaturePlan::build(e);
  ADD_FAILURE() << op << " is not in the builtin manifest";
  return nullptr;
}

inline Tensor cpu(Shape shape, DType dtype = DType::kFloat16) {
  return Tensor::empty(shape, dtype);
}
inline Tensor meta(Shape shape, DType dtype = DType::kFloat16) {
  return Tensor::meta(shape, dtype);
}

// A view that claims to live on a CUDA device (host memory stands in for device memory).
inline Tensor on_cuda(Shape shape, DType dtype = DType::kFloat16, int index = 0) {
  return test_common::host_backed_cuda_tensor(std::move(shape), dtype, index);
}

// The message of the CheckError `f` throws; a marker string when it throws none.
template <class F>
std::string check_error(F&& f) {
  return test_common::error_of<CheckError>(std::forward<F>(f));
}

// The message of the ManifestError `f` throws; a marker string when it throws none.
template <class F>
std::string manifest_error(F&& f) {
  return test_common::error_of<ManifestError>(std::forward<F>(f));
}

}  // namespace tileops::manifest::testing
