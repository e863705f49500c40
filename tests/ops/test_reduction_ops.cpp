// The reduction ops through the framework (SoftmaxFwdOp, LogSoftmaxFwdOp, SumFwdOp, MeanFwdOp,
// AmaxFwdOp): typed and generic calls against float64 oracles written here, rank-0 inputs,
// rooflines and the typed errors of bad calls (tolerances: Note [CPU kernel tolerances] in
// cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
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

// Softmax of x (row-major, `shape`) along axis `dim` (non-negative); with `log`, log_softmax.
std::vector<double> softmax_oracle(const std::vector<double>& x, const Shape& shape,
                                   std::size_t dim, bool log = false) {
  const std::vector<std::int64_t> st = strides_of(shape);
  std::vector<double> y(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    // Visit each slice once, from its first element.
    if ((static_cast<std::int64_t>(e) / st[dim]) % shape[dim] != 0) continue;
    double max = -INFINITY;
    for (std::int64_t k = 0; k < shape[dim]; ++k) max = std::max(max, x[e + k * st[dim]]);
    double sum = 0.0;
    for (std::int64_t k = 0; k < shape[dim]; ++k) sum += std::exp(x[e + k * st[dim]] - max);
    for (std::int64_t k = 0; k < shape[dim]; ++k) {
      const double shifted = x[e + k * st[dim]] - max;
      y[e + k * st[dim]] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
    }
  }
  return y;
}

struct SumOracle {
  Shape shape;  // the output shape
  std::vector<double> sum;
  std::vector<double> atol;  // 1e-5 of sum |x|: float32 accumulation error scales with magnitudes
  std::vector<double> max;   // NaN where a slice holds a NaN
  double count = 1;          // elements per output
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
  o.max.assign(o.sum.size(), -INFINITY);
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (reduced[a]) o.count *= static_cast<double>(shape[a]);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (double v : x) {
    std::int64_t out = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      out += (reduced[a] ? 0 : index[a]) * kept_strides[a];
    o.sum[out] += v;
    o.atol[out] += 1e-5 * std::abs(v);
    if (std::isnan(v) || v > o.max[out]) o.max[out] = v;
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return o;
}

// The oracle's mean: the sum and its tolerance divided by the count.
SumOracle mean_of(SumOracle o) {
  for (double& v : o.sum) v /= o.count;
  for (double& v : o.atol) v /= o.count;
  return o;
}

// A scalar (rank-0 tensor) holding `value`.
Tensor scalar(DType dtype, double value) {
  Tensor t = Tensor::empty({}, dtype);
  store_from_double(dtype, value, t.data_ptr());
  return t;
}

// The exact text of the signature's rule on `dim` for the reductions over a list of axes.
std::string dim_rule(std::string_view op) {
  return std::string(op) +
         ": shape_rules[0]: not present(dim) or (valid_axes(dim.value, len(S)) and "
         "unique_axes(dim.value, len(S)))";
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
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        far(random_tensor({2, 3, 4}, DType::kFloat32, 22));
      },
      "SoftmaxFwdOp: shape_rules[0]: valid_axes(dim, len(S))"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        SoftmaxFwdOp(-4)(random_tensor({2, 3, 4}, DType::kFloat32, 23));
      },
      "SoftmaxFwdOp: shape_rules[0]: valid_axes(dim, len(S))"));
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
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("SoftmaxFwdOp", ParamMap{{"dim", Value(0.5)}});
      },
      "SoftmaxFwdOp: param 'dim' = 0.5 is not an int"));

  if (!has_cuda_kernels(op)) {
    CudaDescriptor cx = cuda_descriptor({6, 5}, DType::kFloat32);
    CudaDescriptor cout = cuda_descriptor({6, 5}, DType::kFloat32);
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { op(cx.tensor, CallOptions{cout.tensor}); },
        "SoftmaxFwdOp's in-tree kernels do not run on cuda:0"));
    EXPECT_TRUE(all_bytes_are(*cout.bytes, 0xAB));
  }
  EXPECT_TRUE(
      all_close(read(op(x)), softmax_oracle(read(x), {6, 5}, 0), tolerance_for(DType::kFloat16)));
}

// A 0-d tensor is a slice of one along dim 0 or -1 (torch accepts both): softmax gives 1,
// log_softmax 0, and the output is 0-d.
template <class OpT>
void check_scalar_along_axis(double want) {
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t dim : {0, -1}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim=" + std::to_string(dim));
      OpT op(dim);
      const Tensor y = op(scalar(dtype, -3.5));
      EXPECT_EQ(y.shape(), Shape{});
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(read(y), std::vector<double>{want});
      Tensor out = poisoned_tensor({}, dtype);
      op(scalar(dtype, 7.25), CallOptions{out});
      EXPECT_EQ(read(out), std::vector<double>{want});
    }
  }
  for (std::int64_t dim : {1, -2}) {
    OpT op(dim);
    EXPECT_TRUE(throws_with<CheckError>(
        [&] { op(scalar(DType::kFloat32, 1.0)); },
        std::string(OpT::kName) + ": shape_rules[0]: valid_axes(dim, len(S))"));
  }
}

TEST(SoftmaxOps, ScalarInput) { check_scalar_along_axis<SoftmaxFwdOp>(1.0); }

TEST(SoftmaxOps, StridedCudaInputFailsOnAvailabilityBeforeAnyCopy) {
  SoftmaxFwdOp op;
  if (has_cuda_kernels(op)) GTEST_SKIP() << "CUDA builds serve cuda:0 (tests/cuda)";
  CudaDescriptor cx = cuda_descriptor({6, 5}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] {
        op(cx.tensor.as_strided({5, 6}, {1, 5}, 0));
      },
      "SoftmaxFwdOp's in-tree kernels do not run on cuda:0"));
}

// ---- LogSoftmaxFwdOp ---------------------------------------------------------------------------

TEST(LogSoftmaxOps, EveryDimAndDTypeMatchesOracle) {
  const Shape shape{3, 5, 7};
  std::uint32_t seed = 51;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t dim : {0, 1, 2, -1, -2, -3}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim=" + std::to_string(dim));
      LogSoftmaxFwdOp op(dim);
      const Tensor x = random_tensor(shape, dtype, seed++, 3.0);
      const Tensor y = op(x);
      ASSERT_EQ(y.shape(), shape);
      ASSERT_EQ(y.dtype(), dtype);
      EXPECT_TRUE(all_close(
          read(y),
          softmax_oracle(read(x), shape, static_cast<std::size_t>(dim < 0 ? dim + 3 : dim), true),
          tolerance_for(dtype)));
      EXPECT_EQ(op.built_entries("log_softmax").size(), 1u);
    }
  }
}

TEST(LogSoftmaxOps, MakeOpGenericCallOutAndNonContiguous) {
  std::shared_ptr<Op> op = make_op("LogSoftmaxFwdOp", ParamMap{{"dim", Value(1)}});
  for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
    const Tensor x = noncontiguous_random({4, 33, 6}, DType::kFloat32, 61, layout, 2.0);
    ASSERT_FALSE(x.is_contiguous());
    Tensor out = poisoned_tensor({4, 33, 6}, DType::kFloat32);
    const std::optional<Tensor> inputs[] = {x};
    CallResult r = op->call(inputs, CallOptions{out});
    EXPECT_EQ(r.at(0)->storage(), out.storage());
    EXPECT_TRUE(all_close(read(out), softmax_oracle(read(x), {4, 33, 6}, 1, true),
                          tolerance_for(DType::kFloat32)));
  }
  std::shared_ptr<Op> last = make_op("LogSoftmaxFwdOp");
  EXPECT_EQ(last->param("dim").as_int(), -1);
  const Tensor x = random_tensor({2, 129}, DType::kBFloat16, 62);
  const std::optional<Tensor> inputs[] = {x};
  EXPECT_TRUE(all_close(read(*last->call(inputs)[0]), softmax_oracle(read(x), {2, 129}, 1, true),
                        tolerance_for(DType::kBFloat16)));
}

TEST(LogSoftmaxOps, EmptyRooflineMetaAndErrors) {
  LogSoftmaxFwdOp op(0);
  EXPECT_EQ(op(Tensor::empty({0, 5}, DType::kFloat16)).shape(), (Shape{0, 5}));
  EXPECT_TRUE(op.built_entries("log_softmax").empty());
  const Tensor m = op(Tensor::meta({6, 5}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{6, 5}));
  const Tensor x = random_tensor({6, 5}, DType::kFloat16, 63);
  op(x);
  EXPECT_EQ(op.eval_roofline().flops, 5 * 30);
  EXPECT_EQ(op.eval_roofline().bytes, 2 * nbytes({6, 5}, DType::kFloat16));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        LogSoftmaxFwdOp(2)(random_tensor({2, 3}, DType::kFloat32, 64));
      },
      "LogSoftmaxFwdOp: shape_rules[0]: valid_axes(dim, len(S))"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({6, 5}, DType::kInt32));
      },
      "LogSoftmaxFwdOp: x dtype is outside [float16, bfloat16, float32]; got int32"));
  EXPECT_TRUE(throws_with<CheckError>([&] { op(x, CallOptions{x}); },
                                      "LogSoftmaxFwdOp: out shares storage with input x"));
  if (!has_cuda_kernels(op)) {
    CudaDescriptor cx = cuda_descriptor({6, 5}, DType::kFloat32);
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { op(cx.tensor); }, "LogSoftmaxFwdOp's in-tree kernels do not run on cuda:0"));
  }
}

TEST(LogSoftmaxOps, ScalarInput) { check_scalar_along_axis<LogSoftmaxFwdOp>(0.0); }

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

// A 0-d input, reduced as PyTorch does: dim None, [], [0] and [-1] all reduce the scalar to
// itself (its sum, mean and max are its value) and the output is 0-d with keepdim either way;
// dim [1] or a repeated axis break the rule on `dim`.
template <class OpT>
void check_rank_zero(DType dtype) {
  const std::optional<Shape> dims[] = {std::nullopt, Shape{}, Shape{0}, Shape{-1}};
  for (const std::optional<Shape>& dim : dims) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(std::string(OpT::kName) + " " + std::string(dtype_name(dtype)) +
                   " dim=" + (dim ? dim->str() : "None") + (keepdim ? " keepdim" : ""));
      OpT op(dim, keepdim);
      const Tensor y = op(scalar(dtype, -3.0));
      EXPECT_EQ(y.shape(), Shape{});
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(read(y), std::vector<double>{-3.0});
      Tensor out = poisoned_tensor({}, dtype);
      op(scalar(dtype, 6.0), CallOptions{out});
      EXPECT_EQ(read(out), std::vector<double>{6.0});
      EXPECT_EQ(op(Tensor::meta({}, dtype)).shape(), Shape{});
    }
  }
  for (const Shape& bad : {Shape{1}, Shape{-2}, Shape{0, -1}}) {
    SCOPED_TRACE(bad.str());
    OpT op(bad);
    EXPECT_TRUE(throws_with<CheckError>([&] { op(scalar(dtype, 1.0)); }, dim_rule(OpT::kName)));
  }
}

TEST(SumOps, RankZeroInput) {
  for (DType dtype : kFloatDTypes) check_rank_zero<SumFwdOp>(dtype);
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
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        SumFwdOp(Shape{1, 1})(x);
      },
      "SumFwdOp: shape_rules[0]: not present(dim) or (valid_axes(dim.value, len(S)) and "
      "unique_axes(dim.value, len(S)))"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        SumFwdOp(Shape{-1, 2})(x);
      },
      "SumFwdOp: shape_rules[0]: not present(dim) or (valid_axes(dim.value, len(S)) and "
      "unique_axes(dim.value, len(S)))"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { SumFwdOp(Shape{3})(x); },
      "SumFwdOp: shape_rules[0]: not present(dim) or (valid_axes(dim.value, len(S)) and "
      "unique_axes(dim.value, len(S)))"));
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
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("SumFwdOp", ParamMap{{"keepdim", Value(1)}});
      },
      "SumFwdOp: param 'keepdim' = 1 is not a bool"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("SumFwdOp", ParamMap{{"dims", Value(Shape{0})}});
      },
      "SumFwdOp: unknown param 'dims'"));
  if (!has_cuda_kernels(op)) {
    CudaDescriptor cx = cuda_descriptor({4, 6, 3}, DType::kFloat32);
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { op(cx.tensor); }, "SumFwdOp's in-tree kernels do not run on cuda:0"));
  }
  check_sum(op, x, {false, true, false}, false);
}

// ---- MeanFwdOp and AmaxFwdOp ------------------------------------------------------------------

// op(x) against the oracle's mean (mean) or max (amax, exact).
template <class OpT>
void check_reduction(OpT& op, const Tensor& x, const std::vector<bool>& reduced, bool keepdim) {
  const SumOracle o = sum_oracle(read(x), x.shape(), reduced, keepdim);
  const Tensor y = op(x);
  ASSERT_EQ(y.shape(), o.shape);
  ASSERT_EQ(y.dtype(), x.dtype());
  if constexpr (std::is_same_v<OpT, AmaxFwdOp>) {
    EXPECT_TRUE(all_close(read(y), o.max, {0.0, 0.0}));
  } else {
    const SumOracle want = mean_of(o);
    EXPECT_TRUE(all_close(read(y), want.sum, tolerance_for(x.dtype()), want.atol));
  }
}

// Random integers in [-1000, 1000] as a tensor of an integer dtype.
Tensor random_integers(const Shape& shape, DType dtype, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-1000, 1000);
  Tensor t = Tensor::empty(shape, dtype);
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    store_from_double(dtype, value(rng), bytes + static_cast<std::size_t>(i) * t.itemsize());
  return t;
}

template <class OpT>
void check_dims_keepdim_and_dtypes(std::string_view interface, std::span<const DType> dtypes) {
  const Shape shape{3, 4, 5};
  struct Case {
    std::optional<Shape> dim;
    std::vector<bool> reduced;
  };
  const Case cases[] = {{std::nullopt, {true, true, true}},  {Shape{}, {true, true, true}},
                        {Shape{-1}, {false, false, true}},   {Shape{0, 2}, {true, false, true}},
                        {Shape{1}, {false, true, false}},    {Shape{2, 0}, {true, false, true}},
                        {Shape{-3, -2}, {true, true, false}}};
  std::uint32_t seed = 200;
  for (DType dtype : dtypes) {
    for (const Case& c : cases) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim=" + (c.dim ? c.dim->str() : "None") +
                     (keepdim ? " keepdim" : ""));
        OpT op(c.dim, keepdim);
        const Tensor x = is_floating(dtype) ? random_tensor(shape, dtype, seed++)
                                            : random_integers(shape, dtype, seed++);
        check_reduction(op, x, c.reduced, keepdim);
        EXPECT_EQ(op.built_entries(interface).size(), 1u);
      }
    }
  }
}

template <class OpT>
void check_generic_call_out_and_noncontiguous() {
  std::shared_ptr<Op> op =
      make_op(OpT::kName, ParamMap{{"dim", Value(Shape{0, 2})}, {"keepdim", Value(true)}});
  for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
    const Tensor x = noncontiguous_random({6, 7, 9}, DType::kBFloat16, 211, layout);
    OpT typed(Shape{0, 2}, true);
    const Tensor want = typed(x.contiguous());
    Tensor out = poisoned_tensor({1, 7, 1}, DType::kBFloat16);
    const std::optional<Tensor> inputs[] = {x};
    CallResult r = op->call(inputs, CallOptions{out});
    EXPECT_EQ(r.at(0)->storage(), out.storage());
    EXPECT_EQ(read(out), read(want));
    check_reduction(typed, x, {true, false, true}, true);
  }
  std::shared_ptr<Op> all = make_op(OpT::kName);
  EXPECT_TRUE(all->param("dim").is_none());
  EXPECT_FALSE(all->param("keepdim").as_bool());
  const Tensor x = random_tensor({1001}, DType::kFloat32, 212);
  const std::optional<Tensor> inputs[] = {x};
  const Tensor y = *all->call(inputs).at(0);
  EXPECT_EQ(y.shape(), Shape{});
  OpT typed;
  EXPECT_EQ(read(y), read(typed(x)));
}

const DType kAmaxDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kInt32,
                             DType::kInt64};

TEST(MeanOps, DimsKeepdimAndDTypesMatchOracle) {
  check_dims_keepdim_and_dtypes<MeanFwdOp>("mean", kFloatDTypes);
}

TEST(MeanOps, MakeOpGenericCallOutAndNonContiguous) {
  check_generic_call_out_and_noncontiguous<MeanFwdOp>();
}

TEST(MeanOps, EmptyInputs) {
  // Nothing to write: no kernel.
  MeanFwdOp rows(Shape{-1});
  EXPECT_EQ(rows(Tensor::empty({0, 5}, DType::kFloat32)).shape(), (Shape{0}));
  EXPECT_TRUE(rows.built_entries("mean").empty());
  // The mean of zero elements is NaN (torch.mean).
  MeanFwdOp cols(Shape{0});
  const Tensor y = cols(Tensor::empty({0, 5}, DType::kFloat16));
  EXPECT_EQ(y.shape(), (Shape{5}));
  for (double v : read(y)) EXPECT_TRUE(std::isnan(v));
  MeanFwdOp everything;
  const Tensor s = everything(Tensor::empty({3, 0}, DType::kBFloat16));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_TRUE(std::isnan(read(s)[0]));
}

TEST(MeanOps, RankZeroInput) {
  for (DType dtype : kFloatDTypes) check_rank_zero<MeanFwdOp>(dtype);
}

TEST(MeanOps, RooflineMetaAndErrors) {
  MeanFwdOp op(Shape{1}, false);
  const Tensor x = random_tensor({4, 6, 3}, DType::kFloat32, 221);
  op(x);
  // One add per element, one scale per output element.
  EXPECT_EQ(op.eval_roofline().flops, 72 + 12);
  EXPECT_EQ(op.eval_roofline().bytes,
            nbytes({4, 6, 3}, DType::kFloat32) + nbytes({4, 3}, DType::kFloat32));
  const Tensor m = op(Tensor::meta({4, 6, 3}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{4, 3}));
  EXPECT_TRUE(throws_with<CheckError>([&] { MeanFwdOp(Shape{1, -2})(x); }, dim_rule("MeanFwdOp")));
  EXPECT_TRUE(throws_with<CheckError>([&] { MeanFwdOp(Shape{3})(x); }, dim_rule("MeanFwdOp")));
  // torch rejects an integer mean.
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({4, 6, 3}, DType::kInt64));
      },
      "MeanFwdOp: x dtype is outside [float16, bfloat16, float32]; got int64"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, CallOptions{Tensor::empty({4, 1, 3}, DType::kFloat32)});
      },
      "MeanFwdOp: out does not have the shape of output: got [4, 1, 3], expected [4, 3]"));
  if (!has_cuda_kernels(op)) {
    CudaDescriptor cx = cuda_descriptor({4, 6, 3}, DType::kFloat32);
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { op(cx.tensor); }, "MeanFwdOp's in-tree kernels do not run on cuda:0"));
  }
}

TEST(AmaxOps, DimsKeepdimAndDTypesMatchOracle) {
  check_dims_keepdim_and_dtypes<AmaxFwdOp>("amax", kAmaxDTypes);
}

TEST(AmaxOps, MakeOpGenericCallOutAndNonContiguous) {
  check_generic_call_out_and_noncontiguous<AmaxFwdOp>();
}

TEST(AmaxOps, RankZeroInput) {
  for (DType dtype : kAmaxDTypes) check_rank_zero<AmaxFwdOp>(dtype);
}

TEST(AmaxOps, NaNPropagates) {
  Tensor x = random_tensor({3, 8}, DType::kBFloat16, 231);
  store_from_double(DType::kBFloat16, NAN,
                    static_cast<unsigned char*>(x.data_ptr()) + 13 * x.itemsize());
  const std::vector<double> rows = read(AmaxFwdOp(Shape{1})(x));
  EXPECT_FALSE(std::isnan(rows[0]));
  EXPECT_TRUE(std::isnan(rows[1]));
  EXPECT_FALSE(std::isnan(rows[2]));
  EXPECT_TRUE(std::isnan(read(AmaxFwdOp()(x))[0]));
}

TEST(AmaxOps, ReducingAnAxisOfLengthZeroIsAnErrorNamingTheAxes) {
  // torch raises too: max has no identity. The failing rule says which case: every axis reduced
  // (dim None or []), or the axes dim names.
  const std::string all_axes =
      "AmaxFwdOp: shape_rules[1]: present(dim) and len(dim.value) > 0 or all(n > 0 for n in S)";
  const std::string named_axes =
      "AmaxFwdOp: shape_rules[2]: not present(dim) or len(S) == 0 or "
      "all(S[normalize_axis(a, len(S))] > 0 for a in dim.value)";
  const Tensor empty_rows = Tensor::empty({0, 5}, DType::kFloat32);
  EXPECT_TRUE(throws_with<CheckError>([&] { AmaxFwdOp()(empty_rows); }, all_axes));
  EXPECT_TRUE(throws_with<CheckError>([&] { AmaxFwdOp(Shape{})(empty_rows); }, all_axes));
  EXPECT_TRUE(throws_with<CheckError>([&] { AmaxFwdOp(Shape{0})(empty_rows); }, named_axes));
  EXPECT_TRUE(throws_with<CheckError>([&] { AmaxFwdOp(Shape{-2}, true)(empty_rows); }, named_axes));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        AmaxFwdOp(Shape{1})(Tensor::meta({3, 0, 2}, DType::kInt32));
      },
      named_axes));
  // Keeping the empty axis is fine: an empty output, no kernel.
  AmaxFwdOp kept(Shape{-1});
  EXPECT_EQ(kept(empty_rows).shape(), (Shape{0}));
  EXPECT_TRUE(kept.built_entries("amax").empty());
}

TEST(AmaxOps, RooflineMetaAndErrors) {
  AmaxFwdOp op(Shape{-1}, true);
  const Tensor x = random_integers({4, 6, 3}, DType::kInt32, 241);
  op(x);
  EXPECT_EQ(op.eval_roofline().flops, 72);
  EXPECT_EQ(op.eval_roofline().bytes,
            nbytes({4, 6, 3}, DType::kInt32) + nbytes({4, 6, 1}, DType::kInt32));
  const Tensor m = op(Tensor::meta({4, 6, 3}, DType::kInt64));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{4, 6, 1}));
  EXPECT_TRUE(throws_with<CheckError>([&] { AmaxFwdOp(Shape{0, 0})(x); }, dim_rule("AmaxFwdOp")));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({4, 6, 3}, DType::kUInt8));
      },
      "AmaxFwdOp: x dtype is outside [float16, bfloat16, float32, int32, int64]; got uint8"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, CallOptions{Tensor::empty({4, 6, 1}, DType::kInt64)});
      },
      "AmaxFwdOp: out dtype is not the dtype of output: got int64, expected int32"));
}

}  // namespace
}  // namespace tileops::test_ops
