// GemmFwdOp, BmmFwdOp and GroupedGemmFwdOp on the CPU (manifest/gemm.yaml, docs/gemm.md) against
// float64 oracles written here, on fresh random inputs and poisoned outputs: the operand layouts
// read in place (a column-major b, a with ld > K) and the one copied, odd and degenerate sizes,
// a long K, every dtype on one instance; bmm's batch patterns; grouped products with empty groups,
// one group of every row, rows past the last end, and the offsets the CPU refuses; the bad inputs
// the signature refuses. What every op gets (dtypes, out=, strides, empty and meta calls) is the
// generic suite's (tests/ops/generic/). Tolerances: Note [CPU kernel tolerances] in
// cpu_numerics.hpp, scaled with sum_k |a||b| as the references scale them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/test_helpers.hpp"
#include "ops_testing.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops::test_ops {
namespace {

using test_common::error_of;

// A product's float64 values and, per element, sum_k |a||b| (+ |bias|).
struct Product {
  std::vector<double> values, scale;
};

// out [m, n] = a [m, k] @ b [k, n] (+ bias [n]), all row-major.
Product oracle(const std::vector<double>& a, const std::vector<double>& b,
               const std::vector<double>* bias, std::int64_t m, std::int64_t k, std::int64_t n) {
  Product p{std::vector<double>(static_cast<std::size_t>(m * n)),
            std::vector<double>(static_cast<std::size_t>(m * n))};
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = bias ? (*bias)[static_cast<std::size_t>(j)] : 0.0;
      double magnitude = bias ? std::abs(sum) : 0.0;
      for (std::int64_t t = 0; t < k; ++t) {
        const double term =
            a[static_cast<std::size_t>(i * k + t)] * b[static_cast<std::size_t>(t * n + j)];
        sum += term;
        magnitude += std::abs(term);
      }
      p.values[static_cast<std::size_t>(i * n + j)] = sum;
      p.scale[static_cast<std::size_t>(i * n + j)] = magnitude;
    }
  return p;
}

::testing::AssertionResult matches(const Tensor& got, const Product& want, DType dtype) {
  const test_cpu::Tolerance tol = tolerance_for(dtype);
  std::vector<double> extra(want.scale.size());
  for (std::size_t i = 0; i < extra.size(); ++i) extra[i] = tol.rtol * want.scale[i];
  return all_close(read(got), want.values, tol, extra);
}

// The transposed view of a fresh random [cols, rows] tensor: [rows, cols], column-major (W.t()).
Tensor column_major(std::int64_t rows, std::int64_t cols, DType dtype, std::uint32_t seed) {
  return random_tensor({cols, rows}, dtype, seed).as_strided({rows, cols}, {1, rows}, 0);
}

// Runs `a @ b (+ bias)` into a poisoned out= buffer and checks it against the oracle.
void check_gemm(const Tensor& a, const Tensor& b,
                const std::optional<Tensor>& bias = std::nullopt) {
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  SCOPED_TRACE(std::string(dtype_name(a.dtype())) + " M=" + std::to_string(m) +
               " K=" + std::to_string(k) + " N=" + std::to_string(n) + (bias ? " bias" : ""));
  const std::vector<double> bias_values = bias ? read(*bias) : std::vector<double>{};
  const Product want = oracle(read(a), read(b), bias ? &bias_values : nullptr, m, k, n);
  GemmFwdOp op;
  Tensor out = poisoned_tensor({m, n}, a.dtype());
  op(a, b, bias, {out});
  EXPECT_TRUE(matches(out, want, a.dtype()));
}

TEST(GemmCpu, EveryDTypeOnOneInstance) {
  GemmFwdOp op;
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = random_tensor({19, 24}, dtype, seed++);
    const Tensor b = random_tensor({24, 13}, dtype, seed++);
    const Tensor bias = random_tensor({13}, dtype, seed++);
    const std::vector<double> bias_values = read(bias);
    EXPECT_TRUE(matches(op(a, b, bias), oracle(read(a), read(b), &bias_values, 19, 24, 13), dtype));
    EXPECT_TRUE(matches(op(a, b), oracle(read(a), read(b), nullptr, 19, 24, 13), dtype));
  }
}

TEST(GemmCpu, ColumnMajorBIsTheTransposedViewOfAWeight) {
  for (DType dtype : kFloatDTypes)
    check_gemm(random_tensor({9, 40}, dtype, 3), column_major(40, 23, dtype, 4));
}

TEST(GemmCpu, ColumnMajorAAndSlicedColumnsWithALongerLeadingDimension) {
  // a = x[:, :K] of an [M, K + 7] tensor: row-major with ld = K + 7.
  const Tensor wide = random_tensor({11, 37}, DType::kBFloat16, 5);
  check_gemm(wide.as_strided({11, 30}, {37, 1}, 0), random_tensor({30, 6}, DType::kBFloat16, 6));
  check_gemm(column_major(11, 30, DType::kFloat32, 7), column_major(30, 6, DType::kFloat32, 8));
}

TEST(GemmCpu, StridesThatFitNoLayoutAreCopied) {
  // Every other element of each row: no unit stride on either axis.
  const Tensor base = random_tensor({10, 34}, DType::kFloat16, 9);
  check_gemm(base.as_strided({10, 17}, {34, 2}, 0), random_tensor({17, 12}, DType::kFloat16, 10));
}

TEST(GemmCpu, OddAndDegenerateSizes) {
  check_gemm(random_tensor({37, 45}, DType::kFloat32, 11),
             random_tensor({45, 29}, DType::kFloat32, 12),
             random_tensor({29}, DType::kFloat32, 13));
  check_gemm(random_tensor({1, 45}, DType::kBFloat16, 14),
             random_tensor({45, 29}, DType::kBFloat16, 15));
  check_gemm(random_tensor({37, 1}, DType::kFloat16, 16),
             random_tensor({1, 3}, DType::kFloat16, 17));
  // M = 0: nothing to write.
  GemmFwdOp op;
  EXPECT_EQ(op(Tensor::empty({0, 8}, DType::kFloat32), random_tensor({8, 5}, DType::kFloat32, 18))
                .shape(),
            Shape({0, 5}));
}

TEST(GemmCpu, AnEmptySumIsTheBiasOrZero) {
  for (DType dtype : kFloatDTypes) {
    const Tensor a = Tensor::empty({4, 0}, dtype), b = Tensor::empty({0, 6}, dtype);
    check_gemm(a, b);
    check_gemm(a, b, random_tensor({6}, dtype, 19));
  }
}

TEST(GemmCpu, LongKAccumulatesWithinTolerance) {
  for (DType dtype : kFloatDTypes)
    check_gemm(random_tensor({5, 16384}, dtype, 20), column_major(16384, 7, dtype, 21),
               random_tensor({7}, dtype, 22));
}

// `t` broadcast to `shape` (aligned from the right): a view with stride 0 on the axes it repeats.
Tensor broadcast_view(const Tensor& t, const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 0);
  const std::size_t lead = shape.size() - t.dim();
  for (std::size_t i = 0; i < t.dim(); ++i)
    if (t.shape()[i] != 1) strides[lead + i] = t.strides()[i];
  return t.as_strided(shape, strides, t.byte_offset());
}

// The float64 bmm of a [*A, M, K] and b [*B, K, N], broadcast as torch.matmul broadcasts.
Product bmm_oracle(const Tensor& a, const Tensor& b, const Shape& batch) {
  const std::int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1],
                     n = b.shape()[b.dim() - 1];
  Shape a_full = batch, b_full = batch;
  for (std::int64_t axis : {m, k}) a_full.push_back(axis);
  for (std::int64_t axis : {k, n}) b_full.push_back(axis);
  const std::vector<double> av = read(broadcast_view(a, a_full)),
                            bv = read(broadcast_view(b, b_full));
  Product all;
  for (std::int64_t l = 0; l < batch.numel(); ++l) {
    const std::vector<double> am(av.begin() + l * m * k, av.begin() + (l + 1) * m * k);
    const std::vector<double> bm(bv.begin() + l * k * n, bv.begin() + (l + 1) * k * n);
    const Product one = oracle(am, bm, nullptr, m, k, n);
    all.values.insert(all.values.end(), one.values.begin(), one.values.end());
    all.scale.insert(all.scale.end(), one.scale.begin(), one.scale.end());
  }
  return all;
}

void check_bmm(const Tensor& a, const Tensor& b, const Shape& batch) {
  SCOPED_TRACE("a " + a.shape().str() + " b " + b.shape().str());
  BmmFwdOp op;
  Shape out_shape = batch;
  out_shape.push_back(a.shape()[a.dim() - 2]);
  out_shape.push_back(b.shape()[b.dim() - 1]);
  Tensor out = poisoned_tensor(out_shape, a.dtype());
  op(a, b, {out});
  EXPECT_TRUE(matches(out, bmm_oracle(a, b, batch), a.dtype()));
}

TEST(BmmCpu, BatchPatterns) {
  const DType t = DType::kBFloat16;
  check_bmm(random_tensor({2, 3, 5, 7}, t, 30), random_tensor({3, 7, 4}, t, 31), Shape{2, 3});
  check_bmm(random_tensor({8, 1, 3, 6}, t, 32), random_tensor({1, 16, 6, 5}, t, 33), Shape{8, 16});
  // One weight shared by the batch (B = []).
  check_bmm(random_tensor({4, 9, 11}, DType::kFloat32, 34),
            random_tensor({11, 10}, DType::kFloat32, 35), Shape{4});
  // A transposed b: k^T of a [2, N, K] tensor.
  const Tensor k = random_tensor({2, 12, 8}, DType::kFloat16, 36);
  check_bmm(random_tensor({2, 6, 8}, DType::kFloat16, 37), k.as_strided({2, 8, 12}, {96, 1, 8}, 0),
            Shape{2});
}

Tensor int32_tensor(const std::vector<double>& values) {
  Tensor t = Tensor::empty({static_cast<std::int64_t>(values.size())}, DType::kInt32);
  write(t, values);
  return t;
}

// Checks a grouped product with group ends `ends` against the oracle: rows of group g use w[g],
// rows past the last end are 0.
void check_grouped(const Tensor& w, const std::vector<double>& ends, std::int64_t m,
                   std::uint32_t seed) {
  const std::int64_t k = w.shape()[1], n = w.shape()[2];
  const Tensor x = random_tensor({m, k}, w.dtype(), seed);
  const std::vector<double> xv = read(x), wv = read(w);
  Product want{std::vector<double>(static_cast<std::size_t>(m * n), 0.0),
               std::vector<double>(static_cast<std::size_t>(m * n), 0.0)};
  std::int64_t begin = 0;
  for (std::size_t g = 0; g < ends.size(); ++g) {
    const auto end = static_cast<std::int64_t>(ends[g]);
    const std::vector<double> rows(xv.begin() + begin * k, xv.begin() + end * k);
    const std::vector<double> wg(wv.begin() + static_cast<std::int64_t>(g) * k * n,
                                 wv.begin() + static_cast<std::int64_t>(g + 1) * k * n);
    const Product one = oracle(rows, wg, nullptr, end - begin, k, n);
    std::copy(one.values.begin(), one.values.end(), want.values.begin() + begin * n);
    std::copy(one.scale.begin(), one.scale.end(), want.scale.begin() + begin * n);
    begin = end;
  }
  GroupedGemmFwdOp op;
  Tensor out = poisoned_tensor({m, n}, w.dtype());
  op(x, w, int32_tensor(ends), {out});
  EXPECT_TRUE(matches(out, want, w.dtype()));
}

TEST(GroupedGemmCpu, EmptyGroupsOneFullGroupAndRowsPastTheLastEnd) {
  const Tensor w = random_tensor({4, 10, 6}, DType::kBFloat16, 40);
  check_grouped(w, {3, 3, 9, 13}, 13, 41);    // group 1 empty
  check_grouped(w, {0, 13, 13, 13}, 13, 42);  // one group holds every row
  check_grouped(w, {2, 5, 5, 8}, 13, 43);     // rows 8..12 belong to no group: 0
  // w as the transposed view of an [E, N, K] tensor.
  const Tensor wt =
      random_tensor({4, 6, 10}, DType::kFloat16, 44).as_strided({4, 10, 6}, {60, 1, 10}, 0);
  check_grouped(wt, {4, 4, 7, 11}, 11, 45);
}

TEST(GroupedGemmCpu, OffsetsOutsideTheContractRaiseBeforeWriting) {
  GroupedGemmFwdOp op;
  const Tensor x = random_tensor({6, 4}, DType::kBFloat16, 50);
  const Tensor w = random_tensor({3, 4, 5}, DType::kBFloat16, 51);
  for (const auto& [ends, rule] :
       {std::pair(std::vector<double>{2, -1, 6}, "offsets[1] = -1 is negative"),
        std::pair(std::vector<double>{4, 2, 6},
                  "offsets[1] = 2 is below offsets[0]; offsets must be non-decreasing"),
        std::pair(std::vector<double>{2, 3, 7}, "offsets[2] = 7 is past the 6 rows of x")}) {
    Tensor out = poisoned_tensor({6, 5}, DType::kBFloat16);
    const std::string message = error_of<CheckError>([&] { op(x, w, int32_tensor(ends), {out}); });
    EXPECT_NE(message.find(rule), std::string::npos) << message;
    EXPECT_TRUE(still_poisoned(out)) << rule;
  }
}

TEST(GemmCpu, BadInputsNameTheTensorAndTheRule) {
  GemmFwdOp op;
  const std::string inner = error_of<CheckError>([&] {
    op(random_tensor({3, 4}, DType::kFloat32, 60), random_tensor({5, 2}, DType::kFloat32, 61));
  });
  EXPECT_EQ(inner, "GemmFwdOp: b shape does not match K: axis 0 is 5, expected 4");
  const std::string dtypes = error_of<CheckError>([&] {
    op(random_tensor({3, 4}, DType::kFloat32, 62), random_tensor({4, 2}, DType::kBFloat16, 63));
  });
  EXPECT_EQ(dtypes, "GemmFwdOp: b dtype differs from T (float32); got bfloat16");
}

}  // namespace
}  // namespace tileops::test_ops
