// The reduction ops through the framework (SoftmaxFwdOp, SumFwdOp): typed and generic calls
// against float64 oracles written here, rooflines and the typed errors of bad calls
// (tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::test_ops {
namespace {

// Row-major strides of a shape, in elements.
std::vector<std::int64_t> strides_of(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t a = shape.size(); a-- > 1;) s[a - 1] = s[a] * shape[a];
  return s;
}

// Softmax of x (row-major, `shape`) along axis `dim` (non-negative).
std::vector<double> softmax_oracle(const std::vector<double>& x, const Shape& shape,
                                   std::size_t dim) {
  const std::vector<std::int64_t> st = strides_of(shape);
  std::vector<double> y(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    // Visit each slice once, from its first element.
    if ((static_cast<std::int64_t>(e) / st[dim]) % shape[dim] != 0) continue;
    double max = -INFINITY;
    for (std::int64_t k = 0; k < shape[dim]; ++k) max = std::max(max, x[e + k * st[dim]]);
    double sum = 0.0;
    for (std::int64_t k = 0; k < shape[dim]; ++k) sum += std::exp(x[e + k * st[dim]] - max);
    for (std::int64_t k = 0; k < shape[dim]; ++k)
      y[e + k * st[dim]] = std::exp(x[e + k * st[dim]] - max) / sum;
  }
  return y;
}

struct SumOracle {
  Shape shape;  // the output shape
  std::vector<double> sum;
  std::vector<double> atol;  // 1e-5 of sum |x|: float32 accumulation error scales with magnitudes
};

SumOracle sum_oracle(const std::vector<double>& x, const Shape& shape,
                     const std::vector<bool>& reduced, bool keepdim) {
  SumOracle o;
  Shape kept;  // the output shape with reduced axes as 1
  for (std::size_t a = 0; a < shape.size(); ++a) {
    kept.push_back(reduced[a] ? 1 : shape[a]);
    if (!reduced[a] || keepdim) o.shape.push_back(reduced[a] ? 1 : shape[a]);
  }
  const std::vector<std::int64_t> kept_strides = strides_of(kept);
  o.sum.assign(static_cast<std::size_t>(kept.numel()), 0.0);
  o.atol.assign(o.sum.size(), 0.0);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (double v : x) {
    std::int64_t out = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      out += (reduced[a] ? 0 : index[a]) * kept_strides[a];
    o.sum[out] += v;
    o.atol[out] += 1e-5 * std::abs(v);
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return o;
}

// ---- SoftmaxFwdOp ------------------------------------------------------------------------------

TEST(SoftmaxOps, EveryDimAndDTypeMatchesOracle) {
  const Shape shape{3, 5, 7};
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t dim : {0, 1, 2, -1, -2, -3}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim=" + std::to_string(dim));
      SoftmaxFwdOp op(dim);
      const Tensor x = random_tensor(shape, dtype, seed++, 3.0);
      const Tensor y = op(x);
      ASSERT_EQ(y.shape(), shape);
      ASSERT_EQ(y.dtype(), dtype);
      EXPECT_TRUE(all_close(
          read(y),
          softmax_oracle(read(x), shape, static_cast<std::size_t>(dim < 0 ? dim + 3 : dim)),
          tolerance_for(dtype)));
      EXPECT_EQ(op.built_entries("softmax").size(), 1u);
    }
  }
}

TEST(SoftmaxOps, MakeOpGenericCallOutAndNonContiguous) {
  std::shared_ptr<Op> op = make_op("SoftmaxFwdOp", ParamMap{{"dim", Value(1)}});
  for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
    const Tensor x = noncontiguous_random({4, 33, 6}, DType::kFloat32, 11, layout, 2.0);
    ASSERT_FALSE(x.is_contiguous());
    Tensor out = poisoned_tensor({4, 33, 6}, DType::kFloat32);
    const std::optional<Tensor> inputs[] = {x};
    CallResult r = op->call(inputs, CallOptions{out});
    EXPECT_EQ(r.at(0)->storage(), out.storage());
    EXPECT_TRUE(all_close(read(out), softmax_oracle(read(x), {4, 33, 6}, 1),
                          tolerance_for(DType::kFloat32)));
  }
  // The default dim is -1.
  std::shared_ptr<Op> last = make_op("SoftmaxFwdOp");
  EXPECT_EQ(last->param("dim").as_int(), -1);
  const Tensor x = random_tensor({2, 129}, DType::kBFloat16, 12);
  const std::optional<Tensor> inputs[] = {x};
  EXPECT_TRUE(all_close(read(*last->call(inputs)[0]), softmax_oracle(read(x), {2, 129}, 1),
                        tolerance_for(DType::kBFloat16)));
}

TEST(SoftmaxOps, EmptyRooflineMetaAndErrors) {
  SoftmaxFwdOp op(0);
  EXPECT_EQ(op(Tensor::empty({0, 5}, DType::kFloat16)).shape(), (Shape{0, 5}));
  EXPECT_TRUE(op.built_entries("softmax").empty());
  const Tensor m = op(Tensor::meta({6, 5}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{6, 5}));
  EXPECT_TRUE(op.built_entries("softmax").empty());

  const Tensor x = random_tensor({6, 5}, DType::kFloat16, 21);
  op(x);
  EXPECT_EQ(op.eval_roofline().flops, 5 * 30);
  EXPECT_EQ(op.eval_roofline().bytes, 2 * nbytes({6, 5}, DType::kFloat16));

  // dim out of range for the input's rank (shape_rules: valid_axes).
  SoftmaxFwdOp far(3);
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        far(random_tensor({2, 3, 4}, DType::kFloat32, 22));
      },
      "SoftmaxFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        SoftmaxFwdOp(-4)(random_tensor({2, 3, 4}, DType::kFloat32, 23));
      },
      "SoftmaxFwdOp: "));
  const Tensor x4 = random_tensor({2, 3, 4, 5}, DType::kFloat32, 24);
  EXPECT_TRUE(all_close(read(far(x4)), softmax_oracle(read(x4), {2, 3, 4, 5}, 3),
                        tolerance_for(DType::kFloat32)));

  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({6, 5}, DType::kInt32));
      },
      "SoftmaxFwdOp: x dtype is outside [float16, bfloat16, float32]; got int32"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, CallOptions{Tensor::empty({5, 6}, DType::kFloat16)});
      },
      "SoftmaxFwdOp: out does not have the shape of output: got [5, 6], expected [6, 5]"));
  EXPECT_TRUE(throws_with<CheckError>([&] { op(x, CallOptions{x}); },
                                      "SoftmaxFwdOp: out shares storage with input x"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("SoftmaxFwdOp", ParamMap{{"axis", Value(0)}});
      },
      "SoftmaxFwdOp: unknown param 'axis'"));
  EXPECT_TRUE(throws_containing<CheckError>(
      [] {
        make_op("SoftmaxFwdOp", ParamMap{{"dim", Value(0.5)}});
      },
      "SoftmaxFwdOp: "));

  CudaDescriptor cx = cuda_descriptor({6, 5}, DType::kFloat32);
  CudaDescriptor cout = cuda_descriptor({6, 5}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] { op(cx.tensor, CallOptions{cout.tensor}); },
      "SoftmaxFwdOp's in-tree kernels do not run on cuda:0"));
  EXPECT_TRUE(all_bytes_are(*cout.bytes, 0xAB));
  EXPECT_TRUE(
      all_close(read(op(x)), softmax_oracle(read(x), {6, 5}, 0), tolerance_for(DType::kFloat16)));
}

TEST(SoftmaxOps, ScalarInput) {
  // A 0-d tensor is a slice of one along dim 0 or -1 (torch accepts both): the result is 1.
  for (std::int64_t dim : {0, -1}) {
    SoftmaxFwdOp op(dim);
    const Tensor y = op(random_tensor({}, DType::kFloat32, 31));
    EXPECT_EQ(y.shape(), Shape{});
    EXPECT_EQ(read(y), std::vector<double>{1.0});
  }
  EXPECT_TRUE(
      throws_with<CheckError>([] { SoftmaxFwdOp(1)(random_tensor({}, DType::kFloat32, 32)); },
                              "SoftmaxFwdOp: shape_rules[0]: valid_axes(dim, len(S))"));
}

TEST(SoftmaxOps, StridedCudaInputFailsOnAvailabilityBeforeAnyCopy) {
  SoftmaxFwdOp op;
  CudaDescriptor cx = cuda_descriptor({6, 5}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] {
        op(cx.tensor.as_strided({5, 6}, {1, 5}, 0));
      },
      "SoftmaxFwdOp's in-tree kernels do not run on cuda:0"));
}

// ---- SumFwdOp ----------------------------------------------------------------------------------

void check_sum(SumFwdOp& op, const Tensor& x, const std::vector<bool>& reduced, bool keepdim) {
  const SumOracle want = sum_oracle(read(x), x.shape(), reduced, keepdim);
  const Tensor y = op(x);
  ASSERT_EQ(y.shape(), want.shape);
  ASSERT_EQ(y.dtype(), x.dtype());
  EXPECT_TRUE(all_close(read(y), want.sum, tolerance_for(x.dtype()), want.atol));
}

TEST(SumOps, DimsKeepdimAndDTypesMatchOracle) {
  const Shape shape{3, 4, 5};
  struct Case {
    std::optional<Shape> dim;
    std::vector<bool> reduced;
  };
  const Case cases[] = {{std::nullopt, {true, true, true}},  {Shape{}, {true, true, true}},
                        {Shape{-1}, {false, false, true}},   {Shape{0, 2}, {true, false, true}},
                        {Shape{1}, {false, true, false}},    {Shape{2, 0}, {true, false, true}},
                        {Shape{-3, -2}, {true, true, false}}};
  std::uint32_t seed = 100;
  for (DType dtype : kFloatDTypes) {
    for (const Case& c : cases) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim=" + (c.dim ? c.dim->str() : "None") +
                     (keepdim ? " keepdim" : ""));
        SumFwdOp op(c.dim, keepdim);
        check_sum(op, random_tensor(shape, dtype, seed++), c.reduced, keepdim);
        EXPECT_EQ(op.built_entries("sum").size(), 1u);
      }
    }
  }
}

TEST(SumOps, MakeOpGenericCallOutAndNonContiguous) {
  std::shared_ptr<Op> op =
      make_op("SumFwdOp", ParamMap{{"dim", Value(Shape{0, 2})}, {"keepdim", Value(true)}});
  for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
    const Tensor x = noncontiguous_random({6, 7, 9}, DType::kBFloat16, 111, layout);
    const SumOracle want = sum_oracle(read(x), {6, 7, 9}, {true, false, true}, true);
    Tensor out = poisoned_tensor({1, 7, 1}, DType::kBFloat16);
    const std::optional<Tensor> inputs[] = {x};
    CallResult r = op->call(inputs, CallOptions{out});
    EXPECT_EQ(r.at(0)->storage(), out.storage());
    EXPECT_TRUE(all_close(read(out), want.sum, tolerance_for(DType::kBFloat16), want.atol));
  }
  std::shared_ptr<Op> all = make_op("SumFwdOp");
  EXPECT_TRUE(all->param("dim").is_none());
  EXPECT_FALSE(all->param("keepdim").as_bool());
  const Tensor x = random_tensor({1001}, DType::kFloat32, 112);
  const std::optional<Tensor> inputs[] = {x};
  const SumOracle want = sum_oracle(read(x), {1001}, {true}, false);
  const Tensor y = *all->call(inputs).at(0);
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_TRUE(all_close(read(y), want.sum, tolerance_for(DType::kFloat32), want.atol));
}

TEST(SumOps, EmptyInputs) {
  // Nothing to write: no kernel.
  SumFwdOp rows(Shape{-1});
  EXPECT_EQ(rows(Tensor::empty({0, 5}, DType::kFloat32)).shape(), (Shape{0}));
  EXPECT_TRUE(rows.built_entries("sum").empty());
  // Reducing an axis of length 0 writes the identity, 0.
  SumFwdOp cols(Shape{0});
  const Tensor y = cols(Tensor::empty({0, 5}, DType::kFloat16));
  EXPECT_EQ(y.shape(), (Shape{5}));
  EXPECT_EQ(read(y), std::vector<double>(5, 0.0));
  SumFwdOp everything;
  const Tensor s = everything(Tensor::empty({3, 0}, DType::kBFloat16));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(read(s), std::vector<double>{0.0});
}

TEST(SumOps, ScalarInput) {
  const Tensor x = random_tensor({}, DType::kFloat32, 131);
  SumFwdOp all;
  EXPECT_EQ(read(all(x)), read(x));
  SumFwdOp kept(Shape{}, true);
  EXPECT_EQ(kept(x).shape(), Shape{});
  EXPECT_EQ(read(kept(x)), read(x));
}

TEST(SumOps, RooflineMetaAndErrors) {
  SumFwdOp op(Shape{1}, false);
  const Tensor x = random_tensor({4, 6, 3}, DType::kFloat32, 121);
  op(x);
  EXPECT_EQ(op.eval_roofline().flops, 72);
  EXPECT_EQ(op.eval_roofline().bytes,
            nbytes({4, 6, 3}, DType::kFloat32) + nbytes({4, 3}, DType::kFloat32));
  const Tensor m = op(Tensor::meta({4, 6, 3}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{4, 3}));

  // Repeated or out-of-range axes break the shape rule.
  EXPECT_TRUE(throws_containing<CheckError>([&] { SumFwdOp(Shape{1, 1})(x); }, "SumFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([&] { SumFwdOp(Shape{-1, 2})(x); }, "SumFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([&] { SumFwdOp(Shape{3})(x); }, "SumFwdOp: "));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({4, 6, 3}, DType::kInt32));
      },
      "SumFwdOp: x dtype is outside [float16, bfloat16, float32]; got int32"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, CallOptions{Tensor::empty({4, 6}, DType::kFloat32)});
      },
      "SumFwdOp: out does not have the shape of output: got [4, 6], expected [4, 3]"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, CallOptions{Tensor::empty({4, 3}, DType::kBFloat16)});
      },
      "SumFwdOp: out dtype is not the dtype of output: got bfloat16, expected float32"));
  EXPECT_TRUE(throws_containing<CheckError>(
      [] {
        make_op("SumFwdOp", ParamMap{{"keepdim", Value(1)}});
      },
      "SumFwdOp: "));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("SumFwdOp", ParamMap{{"dims", Value(Shape{0})}});
      },
      "SumFwdOp: unknown param 'dims'"));
  CudaDescriptor cx = cuda_descriptor({4, 6, 3}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] { op(cx.tensor); }, "SumFwdOp's in-tree kernels do not run on cuda:0"));
  check_sum(op, x, {false, true, false}, false);
}

}  // namespace
}  // namespace tileops::test_ops
