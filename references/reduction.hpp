// Float64 references of the reduction family (manifest/reduction.yaml), on row-major values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tileops/core/shape.hpp"

namespace tileops::references {

// softmax of x (of `shape`) along axis `dim` (negative counts from the end); a scalar is a slice
// of one (its softmax is 1).
std::vector<double> softmax(const std::vector<double>& x, const Shape& shape, std::int64_t dim);
// x - max - log(sum(exp(x - max))) along `dim`, as softmax (a scalar gives 0).
std::vector<double> log_softmax(const std::vector<double>& x, const Shape& shape, std::int64_t dim);

// x summed over the axes `reduced` marks (one flag per axis of `shape`), in row-major order of the
// kept axes. `scale` (when given) receives each output's sum of |terms|, what its error scales
// with.
std::vector<double> sum(const std::vector<double>& x, const Shape& shape,
                        const std::vector<bool>& reduced, std::vector<double>* scale = nullptr);

// The maximum of x over the axes `reduced` marks, as sum; a NaN in a slice gives NaN.
std::vector<double> amax(const std::vector<double>& x, const Shape& shape,
                         const std::vector<bool>& reduced);

// Which axes of a rank-`rank` input `dim` reduces, as the manifest's reduced(S, dim, keepdim,
// 'full') reads it: None or [] reduces every axis.
std::vector<bool> reduced_axes(const std::optional<Shape>& dim, std::size_t rank);

}  // namespace tileops::references
