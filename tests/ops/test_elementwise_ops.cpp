// What is specific to the elementwise ops (AddFwdOp, MulFwdOp) through the framework: broadcasting
// patterns, alpha and its rules, integer arithmetic that wraps over the full range, rooflines.
// Dtypes, out=, strides, empty and meta calls and the bad inputs every signature implies are the
// generic suite's (tests/ops/generic/). Oracles: references/elementwise.hpp for floats, exact
// two's complement arithmetic written here for integers (tolerances: Note [CPU kernel
// tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/test_helpers.hpp"
#include "elementwise.hpp"
#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops::test_ops {
namespace {

enum class Kind { kAdd, kMul };

using test_common::broadcast_shape;

// For each element of the output (row-major), the flat index of the element of an input of
// shape `in` that broadcasts onto it.
std::vector<std::int64_t> broadcast_source(const Shape& in, const Shape& out) {
  std::vector<std::int64_t> src;
  std::vector<std::int64_t> index(out.size(), 0);
  const std::size_t lead = out.size() - in.size();
  for (std::int64_t e = 0; e < out.numel(); ++e) {
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < in.size(); ++a)
      flat = flat * in[a] + (in[a] == 1 ? 0 : index[lead + a]);
    src.push_back(flat);
    for (std::size_t a = out.size(); a-- > 0;) {
      if (++index[a] < out[a]) break;
      index[a] = 0;
    }
  }
  return src;
}

struct FloatOracle {
  std::vector<double> want;
  std::vector<double> atol;
};

FloatOracle float_oracle(Kind kind, const Tensor& a, const Tensor& b, double alpha) {
  FloatOracle o;
  // float32 rounds alpha * b and the sum: error relative to the terms, not to a cancelled result.
  o.want = references::broadcast_binary(
      read(a), a.shape(), read(b), b.shape(),
      [&](double x, double y) { return kind == Kind::kAdd ? x + alpha * y : x * y; },
      [&](double x, double y) {
        return kind == Kind::kAdd ? 2e-7 * (std::abs(x) + std::abs(alpha * y)) : 0.0;
      },
      &o.atol);
  return o;
}

// Integer tensors: raw values (int64 values beyond 2^53 are not exact as doubles).
std::vector<std::int64_t> read_ints(const Tensor& t) {
  std::vector<std::int64_t> v;
  const auto* base = static_cast<const unsigned char*>(t.data_ptr());
  for (std::int64_t off : element_offsets(t)) {
    if (t.dtype() == DType::kInt32) {
      std::int32_t x;
      std::memcpy(&x, base + off, sizeof x);
      v.push_back(x);
    } else {
      std::int64_t x;
      std::memcpy(&x, base + off, sizeof x);
      v.push_back(x);
    }
  }
  return v;
}

Tensor random_ints(const Shape& shape, DType dtype, std::uint32_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937_64 rng(seed);
  auto* base = static_cast<unsigned char*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    // Full-range values, so that sums and products wrap; never 0.
    std::uint64_t r = rng() | 1u;
    if (dtype == DType::kInt32) {
      const auto x = static_cast<std::uint32_t>(r);
      std::memcpy(base + i * 4, &x, 4);
    } else {
      std::memcpy(base + i * 8, &r, 8);
    }
  }
  return t;
}

// Two's complement arithmetic of `dtype`, done in unsigned integers (no signed overflow here).
std::vector<std::int64_t> int_oracle(Kind kind, const Tensor& a, const Tensor& b,
                                     std::int64_t alpha) {
  const Shape out = broadcast_shape(a.shape(), b.shape());
  const std::vector<std::int64_t> ad = read_ints(a);
  const std::vector<std::int64_t> bd = read_ints(b);
  const std::vector<std::int64_t> ia = broadcast_source(a.shape(), out);
  const std::vector<std::int64_t> ib = broadcast_source(b.shape(), out);
  std::vector<std::int64_t> want;
  for (std::size_t e = 0; e < ia.size(); ++e) {
    const auto x = static_cast<std::uint64_t>(ad[ia[e]]);
    const auto y = static_cast<std::uint64_t>(bd[ib[e]]);
    const std::uint64_t r = kind == Kind::kAdd ? x + static_cast<std::uint64_t>(alpha) * y : x * y;
    want.push_back(a.dtype() == DType::kInt32
                       ? static_cast<std::int32_t>(static_cast<std::uint32_t>(r))
                       : static_cast<std::int64_t>(r));
  }
  return want;
}

// One float dtype and both integer widths: the broadcasting and alpha semantics, and integer
// arithmetic wrapping over the full range (the generic suite's random integers are small).
const DType kDTypes[] = {DType::kBFloat16, DType::kInt32, DType::kInt64};

bool is_int(DType d) { return d == DType::kInt32 || d == DType::kInt64; }

Tensor random_of(const Shape& shape, DType dtype, std::uint32_t seed) {
  return is_int(dtype) ? random_ints(shape, dtype, seed) : random_tensor(shape, dtype, seed);
}

// Checks out against the oracle of kind(a, b).
void expect_matches(Kind kind, const Tensor& a, const Tensor& b, const Tensor& out,
                    const Value& alpha) {
  ASSERT_EQ(out.shape(), broadcast_shape(a.shape(), b.shape()));
  ASSERT_EQ(out.dtype(), a.dtype());
  if (is_int(a.dtype())) {
    EXPECT_EQ(read_ints(out), int_oracle(kind, a, b, alpha.as_int()));
  } else {
    const FloatOracle o = float_oracle(kind, a, b, alpha.as_float());
    EXPECT_TRUE(all_close(read(out), o.want, tolerance_for(a.dtype()), o.atol));
  }
}

// Same shapes, a bias row, both sides broadcasting, rank 0, and a zero-length axis broadcast
// against a length-1 one (the result keeps the 0).
const std::pair<Shape, Shape> kShapes[] = {{{7, 33}, {7, 33}}, {{7, 33}, {33}}, {{4, 1, 5}, {3, 1}},
                                           {{1}, {2, 3}},      {{}, {5}},       {{6, 1}, {1, 9}},
                                           {{2, 3, 4}, {}},    {{}, {}},        {{0, 3}, {3}},
                                           {{3, 0}, {1}}};

// ---- AddFwdOp ----------------------------------------------------------------------------------

TEST(AddOps, BroadcastingAndAlpha) {
  std::uint32_t seed = 1;
  for (DType dtype : kDTypes) {
    std::vector<Value> alphas = {Value(1), Value(3), Value(-2)};
    if (!is_int(dtype)) alphas.push_back(Value(0.5));
    for (const Value& alpha : alphas) {
      AddFwdOp op(alpha);
      for (const auto& [sa, sb] : kShapes) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " alpha=" + alpha.repr() + " " + sa.str() +
                     " + " + sb.str());
        const Tensor a = random_of(sa, dtype, seed++);
        const Tensor b = random_of(sb, dtype, seed++);
        expect_matches(Kind::kAdd, a, b, op(a, b), alpha);
      }
    }
  }
}

TEST(AddOps, IntegerSumsWrap) {
  AddFwdOp op;
  Tensor a = Tensor::empty({2}, DType::kInt32);
  a.data<std::int32_t>()[0] = std::numeric_limits<std::int32_t>::max();
  a.data<std::int32_t>()[1] = std::numeric_limits<std::int32_t>::min();
  Tensor b = Tensor::empty({1}, DType::kInt32);
  b.data<std::int32_t>()[0] = 1;
  const Tensor y = op(a, b);
  EXPECT_EQ(read_ints(y),
            (std::vector<std::int64_t>{std::numeric_limits<std::int32_t>::min(),
                                       std::numeric_limits<std::int32_t>::min() + 1}));
  AddFwdOp minus(Value(-1));
  Tensor c = Tensor::empty({1}, DType::kInt64);
  c.data<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::min();
  Tensor d = Tensor::empty({1}, DType::kInt64);
  d.data<std::int64_t>()[0] = 1;
  EXPECT_EQ(read_ints(minus(c, d)),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max()}));
}

TEST(AddOps, RooflineMetaBroadcastAndAlphaRules) {
  EXPECT_EQ(make_op("AddFwdOp")->param("alpha"), Value(1));
  AddFwdOp op(Value(2));
  const Tensor m = op(Tensor::meta({3, 1}, DType::kBFloat16), Tensor::meta({4}, DType::kBFloat16));
  EXPECT_EQ(m.shape(), (Shape{3, 4}));

  const Tensor a = random_tensor({6, 10}, DType::kBFloat16, 51);
  const Tensor b = random_tensor({10}, DType::kBFloat16, 52);
  op(a, b);
  EXPECT_EQ(op.eval_roofline().flops, 2 * 60);  // alpha != 1: two flops per element
  EXPECT_EQ(op.eval_roofline().bytes,
            2 * nbytes({6, 10}, DType::kBFloat16) + nbytes({10}, DType::kBFloat16));
  AddFwdOp unit;
  unit(a, b);
  EXPECT_EQ(unit.eval_roofline().flops, 60);

  // Shapes that do not broadcast.
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { op(a, random_tensor({9}, DType::kBFloat16, 53)); },
      "AddFwdOp: output.shape: shapes [6, 10] and [9] do not broadcast in 'broadcast(A, B)'"));
  // A float alpha on integers, and an alpha the dtype cannot hold, break the shape rules.
  AddFwdOp half(Value(0.5));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { half(random_ints({3}, DType::kInt32, 55), random_ints({3}, DType::kInt32, 56)); },
      "AddFwdOp: shape_rules[0]: category(alpha) == 'int' or category(alpha) == category(T)"));
  AddFwdOp huge(Value(std::int64_t{1} << 40));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { huge(random_ints({3}, DType::kInt32, 57), random_ints({3}, DType::kInt32, 58)); },
      "AddFwdOp: shape_rules[1]: representable(alpha, T)"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("AddFwdOp", ParamMap{{"alpha", Value("two")}});
      },
      "AddFwdOp: param 'alpha' = 'two' is not an int | float"));
  EXPECT_TRUE(
      throws_with<CheckError>([] { AddFwdOp bad(Value(std::numeric_limits<double>::infinity())); },
                              "AddFwdOp: param 'alpha' = inf is not an int | float"));
  expect_matches(Kind::kAdd, a, b, op(a, b), Value(2));
}

// ---- MulFwdOp ----------------------------------------------------------------------------------

TEST(MulOps, Broadcasting) {
  std::uint32_t seed = 100;
  for (DType dtype : kDTypes) {
    MulFwdOp op;
    for (const auto& [sa, sb] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + sa.str() + " * " + sb.str());
      const Tensor a = random_of(sa, dtype, seed++);
      const Tensor b = random_of(sb, dtype, seed++);
      expect_matches(Kind::kMul, a, b, op(a, b), Value(1));
    }
  }
}

TEST(MulOps, RooflineAndErrors) {
  MulFwdOp op;
  const Tensor a = random_tensor({3, 1, 7}, DType::kFloat16, 111);
  const Tensor b = random_tensor({4, 7}, DType::kFloat16, 112);
  op(a, b);
  EXPECT_EQ(op.eval_roofline().flops, 84);
  EXPECT_EQ(op.eval_roofline().bytes, nbytes({3, 1, 7}, DType::kFloat16) +
                                          nbytes({4, 7}, DType::kFloat16) +
                                          nbytes({3, 4, 7}, DType::kFloat16));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(random_ints({2, 5}, DType::kInt32, 113), random_ints({3}, DType::kInt32, 115));
      },
      "MulFwdOp: output.shape: shapes [2, 5] and [3] do not broadcast in 'broadcast(A, B)'"));
  // Mul takes no alpha.
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("MulFwdOp", ParamMap{{"alpha", Value(1)}});
      },
      "MulFwdOp: unknown param 'alpha'"));
}

}  // namespace
}  // namespace tileops::test_ops
