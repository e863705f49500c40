// Float64 oracles of the norm family, shared by the kernel tests (test_norm_cpu.cpp) and the op
// tests (test_norm_ops.cpp). Rows of n contiguous values; w and b are optional per-column vectors.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace tileops::test_oracles {

// y = x / sqrt(mean(x^2) + eps) [* w].
inline std::vector<double> rms_norm_oracle(const std::vector<double>& x,
                                           const std::vector<double>* w, double eps,
                                           std::int64_t n) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r * n < x.size(); ++r) {
    double sum_sq = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum_sq += x[r * n + i] * x[r * n + i];
    const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (std::int64_t i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] * scale * (w ? (*w)[i] : 1.0);
  }
  return y;
}

// y = (x - mean) / sqrt(var + eps) [* w] [+ b], biased variance.
inline std::vector<double> layer_norm_oracle(const std::vector<double>& x,
                                             const std::vector<double>* w,
                                             const std::vector<double>* b, double eps,
                                             std::int64_t n) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r * n < x.size(); ++r) {
    double mean = 0.0;
    for (std::int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (std::int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    var /= static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      double v = (x[r * n + i] - mean) / std::sqrt(var + eps);
      if (w) v *= (*w)[i];
      if (b) v += (*b)[i];
      y[r * n + i] = v;
    }
  }
  return y;
}

}  // namespace tileops::test_oracles
