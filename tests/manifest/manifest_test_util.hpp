// Helpers shared by the manifest-layer tests: toy plans loaded from YAML text, tensors on the
// devices a check cares about, and the text of the CheckError a call raises.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

inline Tensor cpu(Shape shape, DType dtype = DType::kFloat16) { return Tensor::empty(shape, dtype); }
inline Tensor meta(Shape shape, DType dtype = DType::kFloat16) { return Tensor::meta(shape, dtype); }

// A view that claims to live on a CUDA device. The checks never touch the data, so host memory
// stands in for device memory; `backing` keeps it alive.
inline Tensor on_cuda(Shape shape, DType dtype = DType::kFloat16, int index = 0) {
  auto backing = std::make_shared<std::vector<std::byte>>(
      static_cast<std::size_t>(std::max<std::int64_t>(shape.numel(), 1)) * dtype_size(dtype));
  Shape strides;
  std::int64_t stride = 1;
  std::vector<std::int64_t> s(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = stride;
    stride *= shape[i];
  }
  for (std::int64_t v : s) strides.push_back(v);
  return Tensor::from_blob(backing->data(), shape, strides, dtype, Device::cuda(index), backing);
}

// The message of the CheckError `f` throws; a marker string when it throws none.
template <class F>
std::string check_error(F&& f) {
  try {
    f();
  } catch (const CheckError& e) {
    return e.what();
  }
  return "<no CheckError>";
}

// The message of the ManifestError `f` throws; a marker string when it throws none.
template <class F>
std::string manifest_error(F&& f) {
  try {
    f();
  } catch (const ManifestError& e) {
    return e.what();
  }
  return "<no ManifestError>";
}

}  // namespace tileops::manifest::testing
