// Float64 references of the elementwise family (manifest/elementwise.yaml).
#pragma once

#include <functional>
#include <vector>

#include "tileops/core/shape.hpp"

namespace tileops::references {

// f(a, b) elementwise with PyTorch broadcasting of a (of shape sa) and b (of shape sb), row-major
// in the broadcast shape; `scale` (when given) receives magnitude(a, b) per element.
std::vector<double> broadcast_binary(const std::vector<double>& a, const Shape& sa,
                                     const std::vector<double>& b, const Shape& sb,
                                     const std::function<double(double, double)>& f,
                                     const std::function<double(double, double)>& magnitude,
                                     std::vector<double>* scale = nullptr);

}  // namespace tileops::references
