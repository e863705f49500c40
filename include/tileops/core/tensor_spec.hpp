// TensorSpec: the facts about a tensor that checks, builders and benchmarks read, without data.
#pragma once

#include "tileops/core/device.hpp"
#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"

namespace tileops {

struct TensorSpec {
  Device device;
  DType dtype = DType::kFloat32;
  Shape shape;
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

}  // namespace tileops
