// Reductions at LLM sizes against float64 oracles written here, with PyTorch's tolerances
// (Note [Long-row tolerances] in long_rows.hpp): rows of the Llama-3 vocabulary (128256) and a
// full reduction of 2^24 elements, normal(1, 1) inputs in every float dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reduction/cpu/reduction_cpu.hpp"
#include "long_rows.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

// Per row of `n` contiguous values: the sum.
std::vector<double> row_sums(const std::vector<double>& x, std::int64_t n) {
  std::vector<double> sums(x.size() / static_cast<std::size_t>(n), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) sums[i / static_cast<std::size_t>(n)] += x[i];
  return sums;
}

// Per row of `n` contiguous values: softmax, or log_softmax when `log`.
std::vector<double> softmax_rows(const std::vector<double>& x, std::int64_t n, bool log = false) {
  std::vector<double> y(x.size());
  for (std::size_t first = 0; first < x.size(); first += static_cast<std::size_t>(n)) {
    const auto row = x.begin() + static_cast<std::ptrdiff_t>(first);
    const double max = *std::max_element(row, row + n);
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) total += std::exp(row[i] - max);
    for (std::int64_t i = 0; i < n; ++i)
      y[first + i] = log ? row[i] - max - std::log(total) : std::exp(row[i] - max) / total;
  }
  return y;
}

// Per column of a row-major [rows, columns] matrix: the sum.
std::vector<double> column_sums(const std::vector<double>& x, std::int64_t columns) {
  std::vector<double> sums(static_cast<std::size_t>(columns), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) sums[i % static_cast<std::size_t>(columns)] += x[i];
  return sums;
}

std::vector<double> transposed(const std::vector<double>& x, std::int64_t rows,
                               std::int64_t columns) {
  std::vector<double> t(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < columns; ++c) t[c * rows + r] = x[r * columns + c];
  return t;
}

// float16 holds at most 65504: the inputs of a float16 sum are scaled so that the sum fits.
double sum_scale(DType dtype, std::int64_t terms) {
  return dtype == DType::kFloat16 ? 16384.0 / static_cast<double>(terms) : 1.0;
}

TEST(ReductionLongRows, SoftmaxOfVocabularyRows) {
  const Shape shape{kVocabRows, kVocabRow};
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    Tensor out = poisoned_tensor(shape, dtype);
    k::softmax(x, 1, out);
    // The outputs average 1 / 128256 = 7.8e-6, below torch's atol: atol is scaled by that mean
    // (torch's 1e-5 on an output of 1), except that float16 stores these outputs as subnormals,
    // 2^-24 apart, so one such step is allowed.
    const double atol = dtype == DType::kFloat16 ? std::ldexp(1.0, -24) : 1e-5 / kVocabRow;
    EXPECT_TRUE(torch_close(out, softmax_rows(to_doubles(x), kVocabRow), atol));
  }
}

TEST(ReductionLongRows, LogSoftmaxOfVocabularyRows) {
  // The outputs are near -log(128256) = -11.8: torch's tolerances as they are.
  const Shape shape{kVocabRows, kVocabRow};
  std::uint32_t seed = 5;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    Tensor out = poisoned_tensor(shape, dtype);
    k::log_softmax(x, 1, out);
    EXPECT_TRUE(torch_close(out, softmax_rows(to_doubles(x), kVocabRow, true)));
  }
}

TEST(ReductionLongRows, SoftmaxDownVocabularyColumns) {
  // The reduced axis is not the innermost: the kernel keeps one sum per column.
  const std::int64_t columns = 8;
  const Shape shape{kVocabRow, columns};
  std::uint32_t seed = 10;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    Tensor out = poisoned_tensor(shape, dtype);
    k::softmax(x, 0, out);
    const std::vector<double> by_column =
        softmax_rows(transposed(to_doubles(x), kVocabRow, columns), kVocabRow);
    const double atol = dtype == DType::kFloat16 ? std::ldexp(1.0, -24) : 1e-5 / kVocabRow;
    EXPECT_TRUE(torch_close(out, transposed(by_column, columns, kVocabRow), atol));
  }
}

// Divides every value by `n`.
std::vector<double> divided(std::vector<double> values, std::int64_t n) {
  for (double& v : values) v /= static_cast<double>(n);
  return values;
}

TEST(ReductionLongRows, SumAndMeanOfVocabularyRows) {
  const Shape shape{kVocabRows, kVocabRow};
  std::uint32_t seed = 20;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    Tensor mean = poisoned_tensor({kVocabRows}, dtype);
    k::mean(x, {false, true}, mean);
    EXPECT_TRUE(torch_close(mean, divided(row_sums(to_doubles(x), kVocabRow), kVocabRow)));
    const Tensor terms = dtype == DType::kFloat16
                             ? normal_one_one(shape, dtype, seed++, sum_scale(dtype, kVocabRow))
                             : x;
    Tensor sum = poisoned_tensor({kVocabRows}, dtype);
    k::sum(terms, {false, true}, sum);
    EXPECT_TRUE(torch_close(sum, row_sums(to_doubles(terms), kVocabRow)));
  }
}

TEST(ReductionLongRows, SumDownVocabularyColumns) {
  const std::int64_t columns = 8;
  const Shape shape{kVocabRow, columns};
  std::uint32_t seed = 30;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++, sum_scale(dtype, kVocabRow));
    Tensor out = poisoned_tensor({columns}, dtype);
    k::sum(x, {true, false}, out);
    EXPECT_TRUE(torch_close(out, column_sums(to_doubles(x), columns)));
  }
}

TEST(ReductionLongRows, FullSumAndMeanOf2To24Elements) {
  std::uint32_t seed = 40;
  // Two axes, so that the full reduction is also a reduction over several axes.
  const Shape shape{4096, kFullReduction / 4096};
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    Tensor mean = poisoned_tensor({}, dtype);
    k::mean(x, {true, true}, mean);
    EXPECT_TRUE(
        torch_close(mean, divided(row_sums(to_doubles(x), kFullReduction), kFullReduction)));
    const Tensor terms = dtype == DType::kFloat16 ? normal_one_one(shape, dtype, seed++,
                                                                   sum_scale(dtype, kFullReduction))
                                                  : x;
    Tensor sum = poisoned_tensor({}, dtype);
    k::sum(terms, {true, true}, sum);
    EXPECT_TRUE(torch_close(sum, row_sums(to_doubles(terms), kFullReduction)));
  }
}

}  // namespace
}  // namespace tileops::test_cpu
