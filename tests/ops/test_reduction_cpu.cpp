// Numerics of the CPU reduction kernels against float64 oracles written here
// (tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/test_helpers.hpp"
#include "cpu_numerics.hpp"
#include "kernels/common/cpu/cascade.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"
#include "tileops/core/error.hpp"

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

// Slice by slice along dim: slice (o, i) holds x[o * length * inner + d * inner + i]. `log`: the
// log_softmax, x - max - log(sum(exp(x - max))).
std::vector<double> softmax_oracle(const std::vector<double>& x, const Shape& shape,
                                   std::size_t dim, bool log = false) {
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
        const double shifted = x[first + d * inner] - max;
        y[first + d * inner] = log ? shifted - std::log(denom) : std::exp(shifted) / denom;
      }
    }
  }
  return y;
}

// softmax, or log_softmax when `log`.
void check_softmax(const Shape& shape, std::int64_t dim, DType dtype, std::uint32_t seed,
                   double scale = 2.0, double offset = 0.0, bool log = false) {
  SCOPED_TRACE(case_name(dtype, shape) + " dim " + std::to_string(dim) +
               (log ? " log_softmax" : " softmax"));
  const Tensor x = random_tensor(shape, dtype, seed, scale, offset);
  Tensor out = poisoned_tensor(shape, dtype);
  (log ? k::log_softmax : k::softmax)(x, dim, out);
  EXPECT_TRUE(all_close(to_doubles(out),
                        softmax_oracle(to_doubles(x), shape, static_cast<std::size_t>(dim), log),
                        tolerance_for(dtype)));
}

TEST(ReductionCpu, SoftmaxAndLogSoftmaxFirstMiddleAndLastDim) {
  std::uint32_t seed = 1;
  for (bool log : {false, true}) {
    for (DType dtype : kFloatDTypes) {
      auto check = [&](const Shape& shape, std::int64_t dim) {
        check_softmax(shape, dim, dtype, seed++, 2.0, 0.0, log);
      };
      for (std::int64_t n : {1, 3, 7, 33, 1000, 4097}) check({3, n}, 1);
      check({4097}, 0);
      check({33, 5}, 0);
      check({3, 7, 5}, 0);
      check({3, 7, 5}, 1);
      check({3, 7, 5}, 2);
      // An inner extent over one strip of columns (64) with a ragged last strip.
      check({2, 33, 130}, 1);
      check({1000, 3}, 0);
      // A strided axis longer than one block of the column sums (32 steps).
      check({2, 100, 3}, 1);
    }
  }
}

TEST(ReductionCpu, SoftmaxAndLogSoftmaxAreStableForLargeLogits) {
  // exp(1000) overflows float32; only the max-subtracted form survives.
  for (bool log : {false, true}) {
    for (std::int64_t dim : {0, 1})
      check_softmax({7, 33}, dim, DType::kFloat32, 40, 1.0, 1000.0, log);
    check_softmax({7, 33}, 1, DType::kBFloat16, 41, 1.0, -500.0, log);
  }
}

TEST(ReductionCpu, SoftmaxAndLogSoftmaxEmpty) {
  for (DType dtype : kFloatDTypes) {
    for (const Shape& shape : {Shape{0, 5}, Shape{3, 0}, Shape{3, 0, 2}}) {
      for (std::int64_t dim = 0; dim < static_cast<std::int64_t>(shape.size()); ++dim) {
        SCOPED_TRACE(case_name(dtype, shape) + " dim " + std::to_string(dim));
        const Tensor guard = poisoned_tensor({64}, dtype);
        const Tensor x = Tensor::empty(shape, dtype);
        Tensor out = empty_view(guard, shape);
        EXPECT_NO_THROW(k::softmax(x, dim, out));
        EXPECT_NO_THROW(k::log_softmax(x, dim, out));
        EXPECT_TRUE(still_poisoned(guard));
      }
    }
  }
}

TEST(ReductionCpu, LogSoftmaxKeepsTheLogOfTinyProbabilities) {
  // softmax underflows to 0 at x - max = -200; log_softmax must not take the log of it.
  Tensor x = Tensor::empty({2}, DType::kFloat32);
  x.data<float>()[0] = 0.0f;
  x.data<float>()[1] = -200.0f;
  Tensor out = poisoned_tensor({2}, DType::kFloat32);
  k::log_softmax(x, 0, out);
  EXPECT_TRUE(all_close(to_doubles(out), {0.0, -200.0}, tolerance_for(DType::kFloat32)));
}

struct SumOracle {
  std::vector<double> sum;
  std::vector<double> abs_sum;  // sum of |x| per output: the scale of float32 accumulation error
  std::vector<double> max;      // NaN where the slice holds a NaN
  double count = 1;             // elements per output
};

SumOracle sum_oracle(const std::vector<double>& x, const Shape& shape,
                     const std::vector<bool>& reduced) {
  Shape kept;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (!reduced[a]) kept.push_back(shape[a]);
  }
  const auto outputs = static_cast<std::size_t>(kept.numel());
  SumOracle oracle{std::vector<double>(outputs, 0.0), std::vector<double>(outputs, 0.0),
                   std::vector<double>(outputs, -std::numeric_limits<double>::infinity())};
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (reduced[a]) oracle.count *= static_cast<double>(shape[a]);
  }
  for (std::size_t e = 0; e < x.size(); ++e) {
    const auto index = unravel(static_cast<std::int64_t>(e), shape);
    std::int64_t o = 0;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      if (!reduced[a]) o = o * shape[a] + index[a];
    }
    oracle.sum[o] += x[e];
    oracle.abs_sum[o] += std::abs(x[e]);
    if (std::isnan(x[e]) || x[e] > oracle.max[o]) oracle.max[o] = x[e];
  }
  return oracle;
}

enum class Reduction { kSum, kMean, kAmax };

const char* name_of(Reduction r) {
  return r == Reduction::kSum ? "sum" : r == Reduction::kMean ? "mean" : "amax";
}

void run_reduction(Reduction r, const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  switch (r) {
    case Reduction::kSum:
      return k::sum(x, reduced, out);
    case Reduction::kMean:
      return k::mean(x, reduced, out);
    case Reduction::kAmax:
      return k::amax(x, reduced, out);
  }
}

void check_reduction(Reduction r, const Shape& shape, const std::vector<bool>& reduced, DType dtype,
                     std::uint32_t seed) {
  std::string axes;
  for (bool a : reduced) axes += a ? 'R' : 'k';
  SCOPED_TRACE(std::string(name_of(r)) + " " + case_name(dtype, shape) + " axes " + axes);
  const Tensor x = random_tensor(shape, dtype, seed);
  Shape out_shape;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (!reduced[a]) out_shape.push_back(shape[a]);
  }
  Tensor out = poisoned_tensor(out_shape, dtype);
  run_reduction(r, x, reduced, out);
  const SumOracle oracle = sum_oracle(to_doubles(x), shape, reduced);
  if (r == Reduction::kAmax) {
    // The maximum is one of the inputs: exact.
    EXPECT_TRUE(all_close(to_doubles(out), oracle.max, {0.0, 0.0}));
    return;
  }
  // Float32 accumulation error scales with the sum of magnitudes, not with the (possibly
  // cancelling) result: allow 1e-5 of sum |x| (of the mean of |x| for a mean) on top of the
  // dtype's rounding of the result.
  const double divisor = r == Reduction::kMean ? oracle.count : 1.0;
  std::vector<double> want(oracle.sum.size());
  std::vector<double> atol(oracle.abs_sum.size());
  for (std::size_t o = 0; o < want.size(); ++o) {
    want[o] = oracle.sum[o] / divisor;
    atol[o] = 1e-5 * oracle.abs_sum[o] / divisor;
  }
  EXPECT_TRUE(all_close(to_doubles(out), want, tolerance_for(dtype), atol));
}

TEST(ReductionCpu, SumMeanAndAmaxOverAxisSets) {
  std::uint32_t seed = 100;
  for (Reduction r : {Reduction::kSum, Reduction::kMean, Reduction::kAmax}) {
    for (DType dtype : kFloatDTypes) {
      auto check = [&](const Shape& shape, const std::vector<bool>& reduced) {
        check_reduction(r, shape, reduced, dtype, seed++);
      };
      const Shape s3{7, 33, 5};
      for (const std::vector<bool>& reduced : {std::vector<bool>{false, false, true},
                                               {true, false, false},
                                               {true, false, true},
                                               {false, true, false},
                                               {true, true, false},
                                               {false, true, true},
                                               {true, true, true},
                                               {false, false, false}}) {
        check(s3, reduced);
      }
      for (std::int64_t n : {1, 3, 7, 33, 1000, 4097}) check({3, n}, {false, true});
      check({4097}, {true});
      check({1000, 3}, {true, false});
      check({2, 3, 300}, {true, false, false});  // strips of 64 columns, a ragged last one
      // Length-1 axes, reduced or kept, are layout no-ops.
      check({2, 1, 3, 1}, {false, true, true, false});
      check({1, 1}, {true, false});
      check({2, 3, 4, 5}, {true, false, true, false});
      // Runs shorter than a block under an outer reduced group, and more blocks than one chunk
      // (64K elements), in rows and in columns (the chunk partials combined in order).
      check({50, 3, 7}, {true, false, true});
      check({3, 70001}, {false, true});
      check({70001, 3}, {true, false});
    }
  }
}

TEST(ReductionCpu, RankZeroIsTheElement) {
  for (Reduction r : {Reduction::kSum, Reduction::kMean, Reduction::kAmax}) {
    for (DType dtype : kFloatDTypes) check_reduction(r, Shape{}, {}, dtype, 7);
  }
}

TEST(ReductionCpu, RowSumIsTheSequentialCascadeBitForBit) {
  // A row cut into chunks that run as separate tasks (2^20 + 3 elements: 16 full chunks and a
  // ragged one) gives the bits of one sequential cascade over the same blocks, so the result
  // does not depend on the number of threads (Note [Reduction layout]).
  const std::int64_t n = (std::int64_t{1} << 20) + 3;
  const Tensor x = random_tensor({n}, DType::kFloat32, 11, 1.0, 1.0);
  const float* xs = x.data<const float>();
  const float want = kernels::cpu::detail::cascade_sum(n, [xs](std::int64_t i) { return xs[i]; });
  Tensor sum = poisoned_tensor({}, DType::kFloat32);
  k::sum(x, {true}, sum);
  EXPECT_EQ(sum.data<float>()[0], want);
  Tensor mean = poisoned_tensor({}, DType::kFloat32);
  k::mean(x, {true}, mean);
  EXPECT_EQ(mean.data<float>()[0], want / static_cast<float>(n));
}

TEST(ReductionCpu, AmaxPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // A NaN first, in the middle and last of a row, in the lanes' tail, and down a column.
    Tensor x = random_tensor({4, 1003}, dtype, 3);
    for (auto [r, c] : {std::pair{0, 0}, {1, 517}, {2, 1002}}) {
      store_from_double(dtype, nan,
                        static_cast<unsigned char*>(x.data_ptr()) +
                            static_cast<std::size_t>(r * 1003 + c) * x.itemsize());
    }
    Tensor rows = poisoned_tensor({4}, dtype);
    k::amax(x, {false, true}, rows);
    const std::vector<double> got = to_doubles(rows);
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(std::isnan(got[r])) << "row " << r;
    EXPECT_FALSE(std::isnan(got[3]));
    Tensor columns = poisoned_tensor({1003}, dtype);
    k::amax(x, {true, false}, columns);
    const std::vector<double> by_column = to_doubles(columns);
    EXPECT_TRUE(std::isnan(by_column[0]) && std::isnan(by_column[517]) &&
                std::isnan(by_column[1002]));
    EXPECT_FALSE(std::isnan(by_column[1]));
    Tensor all = poisoned_tensor({}, dtype);
    k::amax(x, {true, true}, all);
    EXPECT_TRUE(std::isnan(to_doubles(all)[0]));
  }
  // -inf everywhere is a maximum, not a NaN.
  Tensor x = Tensor::empty({3}, DType::kFloat32);
  std::fill(x.data<float>(), x.data<float>() + 3, -std::numeric_limits<float>::infinity());
  Tensor out = poisoned_tensor({}, DType::kFloat32);
  k::amax(x, {true}, out);
  EXPECT_EQ(out.data<float>()[0], -std::numeric_limits<float>::infinity());
}

template <class I>
void check_integer_amax(DType dtype) {
  SCOPED_TRACE(dtype_name(dtype));
  // Values a float would round (2^53 + 1 for int64, 2^24 + 1 for int32) and the extremes: the
  // maximum must be exact.
  const I big = std::is_same_v<I, std::int64_t> ? static_cast<I>((std::int64_t{1} << 53) + 1)
                                                : static_cast<I>((1 << 24) + 1);
  const std::int64_t rows = 3, columns = 1001;
  Tensor x = Tensor::empty({rows, columns}, dtype);
  I* xs = x.data<I>();
  for (std::int64_t i = 0; i < rows * columns; ++i) xs[i] = static_cast<I>(i % 97) - 50;
  xs[5] = big;
  xs[5 + columns] = big - 1;
  xs[2 * columns + 1000] = std::numeric_limits<I>::max();
  Tensor row_max = Tensor::empty({rows}, dtype);
  k::amax(x, {false, true}, row_max);
  EXPECT_EQ(row_max.data<I>()[0], big);
  EXPECT_EQ(row_max.data<I>()[1], big - 1);
  EXPECT_EQ(row_max.data<I>()[2], std::numeric_limits<I>::max());
  Tensor column_max = Tensor::empty({columns}, dtype);
  k::amax(x, {true, false}, column_max);
  EXPECT_EQ(column_max.data<I>()[5], big);
  EXPECT_EQ(column_max.data<I>()[1000], std::numeric_limits<I>::max());
  // All at the minimum: the identity of max must not leak into the result.
  std::fill(xs, xs + rows * columns, std::numeric_limits<I>::lowest());
  Tensor all = Tensor::empty({}, dtype);
  k::amax(x, {true, true}, all);
  EXPECT_EQ(all.data<I>()[0], std::numeric_limits<I>::lowest());
}

TEST(ReductionCpu, AmaxOfIntegersIsExact) {
  check_integer_amax<std::int32_t>(DType::kInt32);
  check_integer_amax<std::int64_t>(DType::kInt64);
}

TEST(ReductionCpu, SumAndMeanEmpty) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatDTypes) {
    for (Reduction r : {Reduction::kSum, Reduction::kMean}) {
      SCOPED_TRACE(std::string(name_of(r)) + " " + std::string(dtype_name(dtype)));
      // Reducing an empty axis gives the sum's identity, 0, or the mean of nothing, NaN; keeping
      // it gives an empty output.
      const double value = r == Reduction::kSum ? 0.0 : nan;
      const Tensor x = Tensor::empty({0, 5}, dtype);
      Tensor columns = poisoned_tensor({5}, dtype);
      run_reduction(r, x, {true, false}, columns);
      for (double v : to_doubles(columns))
        EXPECT_TRUE(v == value || (std::isnan(v) && std::isnan(value)));
      Tensor all = poisoned_tensor({}, dtype);
      run_reduction(r, x, {true, true}, all);
      const double got = to_doubles(all)[0];
      EXPECT_TRUE(got == value || (std::isnan(got) && std::isnan(value)));
      Tensor none = Tensor::empty({0}, dtype);
      run_reduction(r, x, {false, true}, none);
    }
  }
}

TEST(ReductionCpu, RejectsDTypesOutsideTheirSets) {
  const Tensor x = Tensor::empty({2, 3}, DType::kInt32);
  Tensor out = Tensor::empty({2}, DType::kInt32);
  EXPECT_EQ(test_common::error_of<CheckError>([&] {
              k::sum(x, {false, true}, out);
            }),
            "sum(cpu): x has dtype int32; expected float16, bfloat16 or float32");
  EXPECT_EQ(test_common::error_of<CheckError>([&] {
              k::mean(x, {false, true}, out);
            }),
            "mean(cpu): x has dtype int32; expected float16, bfloat16 or float32");
  EXPECT_EQ(test_common::error_of<CheckError>([&] { k::log_softmax(x, 1, out); }),
            "log_softmax(cpu): x has dtype int32; expected float16, bfloat16 or float32");
  const Tensor b = Tensor::empty({2, 3}, DType::kBool);
  Tensor b_out = Tensor::empty({2}, DType::kBool);
  EXPECT_EQ(test_common::error_of<CheckError>([&] {
              k::amax(b, {false, true}, b_out);
            }),
            "amax(cpu): x has dtype bool; expected float16, bfloat16, float32, int32 or int64");
}

}  // namespace
}  // namespace tileops::test_cpu
