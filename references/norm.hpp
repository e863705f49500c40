// Float64 references of the norm family (manifest/norm.yaml), on rows of n contiguous values.
#pragma once

#include <cstdint>
#include <vector>

namespace tileops::references {

// y = x / sqrt(mean(x^2) + eps) [* w], row by row.
std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>* w,
                             std::int64_t n, double eps);

// y = (x - mean) / sqrt(var + eps) [* w] [+ b], biased variance. `scale` (when given) receives
// the magnitude each element's error scales with: (|x| + |mean|) / sqrt(var + eps) * |w| + |b|.
std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<double>* w,
                               const std::vector<double>* b, std::int64_t n, double eps,
                               std::vector<double>* scale = nullptr);

}  // namespace tileops::references
