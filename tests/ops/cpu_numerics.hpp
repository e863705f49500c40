// Helpers for the numerics tests of the CPU reference kernels: random inputs, poisoned outputs,
// float64 read-back and dtype-aware comparison. The oracles are the float64 references
// (references/: norm.hpp, elementwise.hpp, ...), which never call kernel code.
//
// Note [CPU kernel tolerances]
// The tolerances are the references' (Note [Tolerances] in references/references.hpp): a kernel
// computes in float32 and rounds once to T, the reference computes in float64 from the same
// (T-rounded) inputs. Ops whose error scales with input magnitudes rather than the result (sums,
// adds that cancel) widen atol in their own test, saying why.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "references.hpp"
#include "tileops/core/dtype.hpp"
#include "tileops/core/numeric.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::test_cpu {

inline const DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

using Tolerance = references::Tolerance;
inline Tolerance tolerance_for(DType dtype) { return references::tolerance(dtype); }

// Elements of t as doubles (exact for every float dtype here).
inline std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> values(static_cast<std::size_t>(t.numel()));
  const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = load_as_double(t.dtype(), bytes + i * t.itemsize());
  }
  return values;
}

// Normal values scaled by `scale` plus `offset`, kept away from 0 (|v| >= 0.05 * scale) so that
// relative comparisons and divisions stay meaningful; stored rounded to the tensor's dtype.
inline void fill_normal(Tensor& t, std::uint32_t seed, double scale = 1.0, double offset = 0.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    double v = normal(rng);
    if (std::abs(v) < 0.05) v = v < 0 ? -0.05 : 0.05;
    store_from_double(t.dtype(), offset + scale * v,
                      bytes + static_cast<std::size_t>(i) * t.itemsize());
  }
}

// All bits set: a NaN in every float dtype (and -1 in integers), so an element a kernel forgets
// to write fails the comparison.
inline void poison(Tensor& t) {
  if (t.nbytes() > 0) std::memset(t.data_ptr(), 0xFF, t.nbytes());
}

inline Tensor random_tensor(const Shape& shape, DType dtype, std::uint32_t seed, double scale = 1.0,
                            double offset = 0.0) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_normal(t, seed, scale, offset);
  return t;
}

inline Tensor poisoned_tensor(const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  poison(t);
  return t;
}

// True when every byte of t's storage span is 0xFF (poison's pattern).
inline bool still_poisoned(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < t.nbytes(); ++i)
    if (p[i] != 0xFF) return false;
  return true;
}

// A view of `shape`, which holds no elements, at the start of `guard` (a poisoned tensor): a
// kernel handed it must write nothing, which still_poisoned(guard) then shows.
inline Tensor empty_view(const Tensor& guard, const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 1);
  return guard.as_strided(shape, strides, 0);
}

// Compares element-wise; atol_per_element (optional, same length) adds to the tolerance of each
// element. Reports the count of failures and the worst one.
inline ::testing::AssertionResult all_close(const std::vector<double>& got,
                                            const std::vector<double>& want, Tolerance tol,
                                            const std::vector<double>& atol_per_element = {}) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != expected " << want.size();
  }
  std::size_t failures = 0;
  std::size_t worst = 0;
  double worst_excess = -1.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double extra = atol_per_element.empty() ? 0.0 : atol_per_element[i];
    const double allowed = tol.rtol * std::abs(want[i]) + tol.atol + extra;
    const double error = std::abs(got[i] - want[i]);
    // NaN errors fail: !(error <= allowed).
    if (!(error <= allowed)) {
      ++failures;
      const double excess =
          std::isnan(error) ? std::numeric_limits<double>::infinity() : error / allowed;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(10);
  msg << failures << " of " << got.size() << " elements differ; worst at " << worst << ": got "
      << got[worst] << ", want " << want[worst] << " (rtol " << tol.rtol << ", atol " << tol.atol
      << ")";
  return ::testing::AssertionFailure() << msg.str();
}

inline std::string case_name(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + " " + shape.str();
}

}  // namespace tileops::test_cpu
