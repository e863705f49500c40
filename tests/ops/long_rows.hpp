// Accuracy at LLM sizes (test_reduction_long_rows.cpp, test_norm_long_rows.cpp): a row of the
// Llama-3 vocabulary and a full reduction of 2^24 elements, checked with PyTorch's tolerances.
//
// Note [Long-row tolerances]
// The float64 oracle's result is rounded to the output dtype T (what an exact kernel would
// return) and the kernel's output must satisfy |got - want| <= rtol * |want| + atol with
// torch.testing's defaults for T:
//   float32   rtol 1.3e-6   atol 1e-5
//   float16   rtol 1e-3     atol 1e-5
//   bfloat16  rtol 1.6e-2   atol 1e-5
// rtol covers one ulp of T (the float32 result may round to the neighbour of the exact value) on
// top of the float32 arithmetic; a float32 running sum of n same-signed terms loses about
// sqrt(n) / 6 ulps (5e-6 relative at n = 128256, 8e-5 at n = 2^24), more than float32's rtol,
// so these tests fail a kernel that accumulates a long row in one float.
// The inputs are normal(1, 1): terms of one sign, whose sum does not cancel the error away.
// torch's atol is sized for results of order 1; where a result is much smaller (a softmax over
// n entries averages 1 / n), a test scales atol with it and says so.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cpu_numerics.hpp"

namespace tileops::test_cpu {

// The entries of a Llama-3 logits row, and the rows of a test batch (the manifest's
// llama3-lm-head workload, [4, 128256]): several rows, so that no single lucky row decides.
inline constexpr std::int64_t kVocabRow = 128256;
inline constexpr std::int64_t kVocabRows = 4;
inline constexpr std::int64_t kFullReduction = std::int64_t{1} << 24;

inline Tolerance torch_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {1e-3, 1e-5};
    case DType::kBFloat16:
      return {1.6e-2, 1e-5};
    default:
      return {1.3e-6, 1e-5};
  }
}

// normal(1, 1) values scaled by `scale`, stored in `dtype` (cpu_numerics' fill_normal).
inline Tensor normal_one_one(const Shape& shape, DType dtype, std::uint32_t seed,
                             double scale = 1.0) {
  return random_tensor(shape, dtype, seed, scale, scale);
}

// `got` (a tensor of dtype T) against the float64 `want` rounded to T, with torch's tolerance for
// T; `atol` replaces torch's atol where the test says why.
inline ::testing::AssertionResult torch_close(const Tensor& got, std::vector<double> want,
                                              std::optional<double> atol = std::nullopt) {
  unsigned char element[8];
  for (double& v : want) {
    store_from_double(got.dtype(), v, element);
    v = load_as_double(got.dtype(), element);
  }
  Tolerance tol = torch_tolerance(got.dtype());
  if (atol) tol.atol = *atol;
  return all_close(to_doubles(got), want, tol);
}

}  // namespace tileops::test_cpu
