// Numerics of the CPU reduction kernels against float64 oracles written here
// (tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cpu_numerics.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

// Row-major multi-index helpers for the oracles.
std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    index[a] = flat % shape[a];
    flat /= shape[a];
  }
  return index;
}

// Slice by slice along dim: slice (o, i) holds x[o * length * inner + d * inner + i].
std::vector<double> softmax_oracle(const std::vector<double>& x, const Shape& shape,
                                   std::size_t dim) {
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  for (std::size_t a = 0; a < dim; ++a) outer *= shape[a];
  for (std::size_t a = dim + 1; a < shape.size(); ++a) inner *= shape[a];
  const std::int64_t length = shape[dim];
  std::vector<double> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t first = o * length * inner + i;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t d = 0; d < length; ++d) max = std::max(max, x[first + d * inner]);
      double denom = 0.0;
      for (std::int64_t d = 0; d < length; ++d) denom += std::exp(x[first + d * inner] - max);
      for (std::int64_t d = 0; d < length; ++d) {
        y[first + d * inner] = std::exp(x[first + d * inner] - max) / denom;
      }
    }
  }
  return y;
}

void check_softmax(const Shape& shape, std::int64_t dim, DType dtype, std::uint32_t seed,
                   double scale = 2.0, double offset = 0.0) {
  SCOPED_TRACE(case_name(dtype, shape) + " dim " + std::to_string(dim));
  const Tensor x = random_tensor(shape, dtype, seed, scale, offset);
  Tensor out = poisoned_tensor(shape, dtype);
  k::softmax(x, dim, out);
  EXPECT_TRUE(all_close(to_doubles(out),
                        softmax_oracle(to_doubles(x), shape, static_cast<std::size_t>(dim)),
                        tolerance_for(dtype)));
}

TEST(ReductionCpu, SoftmaxFirstMiddleAndLastDim) {
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : {1, 3, 7, 33, 1000, 4097}) check_softmax({3, n}, 1, dtype, seed++);
    check_softmax({4097}, 0, dtype, seed++);
    check_softmax({33, 5}, 0, dtype, seed++);
    check_softmax({3, 7, 5}, 0, dtype, seed++);
    check_softmax({3, 7, 5}, 1, dtype, seed++);
    check_softmax({3, 7, 5}, 2, dtype, seed++);
    // An inner extent over one strip of columns (64) with a ragged last strip.
    check_softmax({2, 33, 130}, 1, dtype, seed++);
    check_softmax({1000, 3}, 0, dtype, seed++);
  }
}

TEST(ReductionCpu, SoftmaxIsStableForLargeLogits) {
  // exp(1000) overflows float32; only the max-subtracted form survives.
  for (std::int64_t dim : {0, 1}) check_softmax({7, 33}, dim, DType::kFloat32, 40, 1.0, 1000.0);
  check_softmax({7, 33}, 1, DType::kBFloat16, 41, 1.0, -500.0);
}

TEST(ReductionCpu, SoftmaxEmpty) {
  for (DType dtype : kFloatDTypes) {
    for (const Shape& shape : {Shape{0, 5}, Shape{3, 0}, Shape{3, 0, 2}}) {
      for (std::int64_t dim = 0; dim < static_cast<std::int64_t>(shape.size()); ++dim) {
        const Tensor x = Tensor::empty(shape, dtype);
        Tensor out = Tensor::empty(shape, dtype);
        k::softmax(x, dim, out);
      }
    }
  }
}

struct SumOracle {
  std::vector<double> sum;
  std::vector<double> abs_sum;  // sum of |x| per output: the scale of float32 accumulation error
};

SumOracle sum_oracle(const std::vector<double>& x, const Shape& shape,
                     const std::vector<bool>& reduced) {
  Shape kept;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (!reduced[a]) kept.push_back(shape[a]);
  }
  SumOracle oracle{std::vector<double>(static_cast<std::size_t>(kept.numel()), 0.0),
                   std::vector<double>(static_cast<std::size_t>(kept.numel()), 0.0)};
  for (std::size_t e = 0; e < x.size(); ++e) {
    const auto index = unravel(static_cast<std::int64_t>(e), shape);
    std::int64_t o = 0;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      if (!reduced[a]) o = o * shape[a] + index[a];
    }
    oracle.sum[o] += x[e];
    oracle.abs_sum[o] += std::abs(x[e]);
  }
  return oracle;
}

void check_sum(const Shape& shape, const std::vector<bool>& reduced, DType dtype,
               std::uint32_t seed) {
  std::string axes;
  for (bool r : reduced) axes += r ? 'R' : 'k';
  SCOPED_TRACE(case_name(dtype, shape) + " axes " + axes);
  const Tensor x = random_tensor(shape, dtype, seed);
  Shape out_shape;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (!reduced[a]) out_shape.push_back(shape[a]);
  }
  Tensor out = poisoned_tensor(out_shape, dtype);
  k::sum(x, reduced, out);
  const SumOracle oracle = sum_oracle(to_doubles(x), shape, reduced);
  // Float32 accumulation error scales with the sum of magnitudes, not with the (possibly
  // cancelling) result: allow 1e-5 of sum |x| on top of the dtype's rounding of the result.
  std::vector<double> atol(oracle.abs_sum.size());
  std::transform(oracle.abs_sum.begin(), oracle.abs_sum.end(), atol.begin(),
                 [](double s) { return 1e-5 * s; });
  EXPECT_TRUE(all_close(to_doubles(out), oracle.sum, tolerance_for(dtype), atol));
}

TEST(ReductionCpu, SumOverAxisSets) {
  std::uint32_t seed = 100;
  for (DType dtype : kFloatDTypes) {
    const Shape s3{7, 33, 5};
    for (const std::vector<bool>& reduced : {std::vector<bool>{false, false, true},
                                             {true, false, false},
                                             {true, false, true},
                                             {false, true, false},
                                             {true, true, false},
                                             {false, true, true},
                                             {true, true, true},
                                             {false, false, false}}) {
      check_sum(s3, reduced, dtype, seed++);
    }
    for (std::int64_t n : {1, 3, 7, 33, 1000, 4097})
      check_sum({3, n}, {false, true}, dtype, seed++);
    check_sum({4097}, {true}, dtype, seed++);
    check_sum({1000, 3}, {true, false}, dtype, seed++);
    check_sum({2, 3, 300}, {true, false, false}, dtype, seed++);  // strips of 256 columns
    // Length-1 axes, reduced or kept, are layout no-ops.
    check_sum({2, 1, 3, 1}, {false, true, true, false}, dtype, seed++);
    check_sum({1, 1}, {true, false}, dtype, seed++);
    check_sum({2, 3, 4, 5}, {true, false, true, false}, dtype, seed++);
  }
}

TEST(ReductionCpu, SumOfRankZeroIsTheElement) {
  for (DType dtype : kFloatDTypes) check_sum(Shape{}, {}, dtype, 7);
}

TEST(ReductionCpu, SumEmpty) {
  for (DType dtype : kFloatDTypes) {
    // Reducing an empty axis gives zeros; keeping it gives an empty output.
    const Tensor x = Tensor::empty({0, 5}, dtype);
    Tensor zeros = poisoned_tensor({5}, dtype);
    k::sum(x, {true, false}, zeros);
    EXPECT_TRUE(all_close(to_doubles(zeros), std::vector<double>(5, 0.0), {0.0, 0.0}));
    Tensor all = poisoned_tensor({}, dtype);
    k::sum(x, {true, true}, all);
    EXPECT_TRUE(all_close(to_doubles(all), {0.0}, {0.0, 0.0}));
    Tensor none = Tensor::empty({0}, dtype);
    k::sum(x, {false, true}, none);
  }
}

}  // namespace
}  // namespace tileops::test_cpu
