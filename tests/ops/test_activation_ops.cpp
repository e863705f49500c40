// The activation ops through the framework (SiluFwdOp, GeluFwdOp, SiluAndMulFwdOp,
// GeluAndMulFwdOp) against float64 oracles written here: every dtype on one instance, both GELU
// forms, odd sizes and 3-D inputs, the gate/up order of the gated ops, values where exp and erf
// saturate, NaN, rooflines and the typed errors of bad calls (tolerances: Note [CPU kernel
// tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "ops_testing.hpp"
#include "tileops/ops/activation.hpp"

namespace tileops::test_ops {
namespace {

double silu(double g) { return g / (1.0 + std::exp(-g)); }
double gelu_erf(double g) { return 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))); }
double gelu_tanh(double g) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
}

// The float32 formulas of GELU cancel for negative g (1 + erf -> 0): a kernel's error is about
// float32's epsilon times 0.5 |g| there, so that is allowed on top of the dtype's tolerance.
std::vector<double> cancellation_atol(const std::vector<double>& g, const std::vector<double>& up) {
  std::vector<double> atol;
  for (std::size_t i = 0; i < g.size(); ++i)
    atol.push_back(1e-6 * 0.5 * std::abs(g[i]) * (up.empty() ? 1.0 : std::abs(up[i])));
  return atol;
}

// act(x) elementwise.
template <class Act>
std::vector<double> unary_oracle(const std::vector<double>& x, Act act) {
  std::vector<double> y;
  for (double g : x) y.push_back(act(g));
  return y;
}

// Rows of x are [gate | up], N each.
struct Halves {
  std::vector<double> gate, up;
};
Halves split_rows(const std::vector<double>& x, std::int64_t n) {
  Halves h;
  for (std::size_t r = 0; n > 0 && r < x.size() / static_cast<std::size_t>(2 * n); ++r) {
    const std::size_t base = r * static_cast<std::size_t>(2 * n);
    h.gate.insert(h.gate.end(), x.begin() + base, x.begin() + base + n);
    h.up.insert(h.up.end(), x.begin() + base + n, x.begin() + base + 2 * n);
  }
  return h;
}

template <class Act>
std::vector<double> gated_oracle(const Halves& h, Act act) {
  std::vector<double> y;
  for (std::size_t i = 0; i < h.gate.size(); ++i) y.push_back(act(h.gate[i]) * h.up[i]);
  return y;
}

TEST(SiluOps, EveryDTypeOnOneInstanceOddSizesAndOut) {
  SiluFwdOp op;
  std::uint32_t seed = 1;
  for (const Shape& shape : {Shape{7}, Shape{3, 1025}, Shape{2, 3, 33}})
    for (DType dtype : kFloatDTypes) {
      const Tensor x = random_tensor(shape, dtype, seed++, 4.0);
      const std::vector<double> want = unary_oracle(read(x), silu);
      EXPECT_TRUE(all_close(read(op(x)), want, tolerance_for(dtype)))
          << shape.str() << " " << dtype_name(dtype);
      Tensor out = poisoned_tensor(shape, dtype);
      op(x, CallOptions{out});
      EXPECT_TRUE(all_close(read(out), want, tolerance_for(dtype)));
    }
}

TEST(SiluOps, SaturatesWithoutNaNAndPropagatesNaN) {
  SiluFwdOp op;
  Tensor x = Tensor::empty({5}, DType::kFloat32);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write(x, {-200.0, -88.0, 0.0, 88.0, nan});
  const std::vector<double> y = read(op(x));
  EXPECT_EQ(y[0], 0.0);  // exp(200) overflows to inf: g / inf = -0
  EXPECT_NEAR(y[1], silu(-88.0), 1e-30);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_FLOAT_EQ(y[3], 88.0);
  EXPECT_TRUE(std::isnan(y[4]));
}

TEST(GeluOps, BothFormsEveryDTypeAndNonContiguous) {
  std::uint32_t seed = 10;
  for (const char* form : {"none", "tanh"}) {
    GeluFwdOp op(form);
    const bool tanh = std::string(form) == "tanh";
    for (DType dtype : kFloatDTypes) {
      const Tensor x = random_tensor({4, 515}, dtype, seed++, 3.0);
      const std::vector<double> g = read(x);
      const std::vector<double> want = unary_oracle(g, tanh ? gelu_tanh : gelu_erf);
      EXPECT_TRUE(all_close(read(op(x)), want, tolerance_for(dtype), cancellation_atol(g, {})))
          << form << " " << dtype_name(dtype);
      const Tensor strided = noncontiguous_random({6, 9}, dtype, seed++, Layout::kTransposed, 3.0);
      EXPECT_TRUE(all_close(read(op(strided)),
                            unary_oracle(read(strided), tanh ? gelu_tanh : gelu_erf),
                            tolerance_for(dtype), cancellation_atol(read(strided), {})));
    }
  }
}

TEST(GeluOps, TheFormsDifferWhereTheyShould) {
  // At g = 1 the erf and tanh forms differ by about 1.6e-4: the op must compute the one asked.
  Tensor x = Tensor::empty({1}, DType::kFloat32);
  write(x, {1.0});
  EXPECT_NEAR(read(GeluFwdOp("none")(x))[0], gelu_erf(1.0), 1e-6);
  EXPECT_NEAR(read(GeluFwdOp("tanh")(x))[0], gelu_tanh(1.0), 1e-6);
  EXPECT_GT(std::abs(gelu_erf(1.0) - gelu_tanh(1.0)), 1e-4);
}

TEST(GatedOps, ActivationAppliesToTheFirstHalf) {
  // x = [gate | up] = [[2, 3]]: silu(2) * 3, not silu(3) * 2.
  Tensor x = Tensor::empty({1, 2}, DType::kFloat32);
  write(x, {2.0, 3.0});
  EXPECT_NEAR(read(SiluAndMulFwdOp()(x))[0], silu(2.0) * 3.0, 1e-5);
  EXPECT_NEAR(read(GeluAndMulFwdOp()(x))[0], gelu_erf(2.0) * 3.0, 1e-5);
}

TEST(GatedOps, EveryDTypeOddNAnd3DOnOneInstance) {
  SiluAndMulFwdOp silu_op;
  GeluAndMulFwdOp gelu_op("tanh");
  std::uint32_t seed = 30;
  for (const Shape& shape : {Shape{1, 2}, Shape{3, 2 * 1027}, Shape{2, 5, 2 * 33}})
    for (DType dtype : kFloatDTypes) {
      const Tensor x = random_tensor(shape, dtype, seed++, 3.0);
      const Halves h = split_rows(read(x), shape.back() / 2);
      Shape out_shape = shape;
      out_shape[out_shape.size() - 1] /= 2;
      const Tensor s = silu_op(x);
      EXPECT_EQ(s.shape(), out_shape);
      EXPECT_TRUE(all_close(read(s), gated_oracle(h, silu), tolerance_for(dtype)))
          << shape.str() << " " << dtype_name(dtype);
      Tensor out = poisoned_tensor(out_shape, dtype);
      gelu_op(x, CallOptions{out});
      EXPECT_TRUE(all_close(read(out), gated_oracle(h, gelu_tanh), tolerance_for(dtype),
                            cancellation_atol(h.gate, h.up)));
    }
}

TEST(ActivationOps, EmptyMetaAndRooflines) {
  SiluFwdOp silu_op;
  EXPECT_EQ(silu_op(Tensor::empty({0, 7}, DType::kBFloat16)).shape(), (Shape{0, 7}));
  EXPECT_TRUE(silu_op.built_entries("silu").empty());
  const Tensor m = SiluAndMulFwdOp()(Tensor::meta({3, 8}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{3, 4}));
  GeluFwdOp tanh_op("tanh");
  tanh_op(random_tensor({6, 5}, DType::kFloat16, 40));
  EXPECT_EQ(tanh_op.eval_roofline().flops, 9 * 30);
  EXPECT_EQ(tanh_op.eval_roofline().bytes, 2 * nbytes({6, 5}, DType::kFloat16));
  GeluAndMulFwdOp gated;
  gated(random_tensor({3, 10}, DType::kBFloat16, 41));
  EXPECT_EQ(gated.eval_roofline().flops, 6 * 3 * 5);
  EXPECT_EQ(gated.eval_roofline().bytes,
            nbytes({3, 10}, DType::kBFloat16) + nbytes({3, 5}, DType::kBFloat16));
}

TEST(ActivationOps, BadCallsNameTheTensorAndTheRule) {
  EXPECT_TRUE(throws_with<CheckError>(
      [] { SiluFwdOp()(Tensor::empty({4}, DType::kInt32)); },
      "SiluFwdOp: x dtype is outside [float16, bfloat16, float32]; got int32"));
  // An odd last axis has no N with 2 N = 7.
  EXPECT_TRUE(throws_containing<CheckError>(
      [] {
        SiluAndMulFwdOp()(Tensor::empty({2, 7}, DType::kFloat32));
      },
      "SiluAndMulFwdOp: x axis 1 is not 2 * N; got 7"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        GeluAndMulFwdOp()(Tensor::empty({2, 8}, DType::kFloat32),
                          CallOptions{Tensor::empty({2, 8}, DType::kFloat32)});
      },
      "GeluAndMulFwdOp: out does not have the shape of output: got [2, 8], expected [2, 4]"));
  const Tensor x = random_tensor({2, 8}, DType::kFloat32, 50);
  EXPECT_TRUE(throws_with<CheckError>([&] { GeluFwdOp()(x, CallOptions{x}); },
                                      "GeluFwdOp: out shares storage with input x"));
  EXPECT_TRUE(throws_containing<CheckError>([] { GeluFwdOp("exact"); }, "approximate"));
  // In a CPU build no in-tree kernel runs on CUDA; a CUDA build's kernels would read host memory
  // here, and tests/cuda covers them.
  CudaDescriptor cx = cuda_descriptor({2, 8}, DType::kFloat32);
  SiluFwdOp silu;
  if (!has_cuda_kernels(silu)) {
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { silu(cx.tensor); }, "SiluFwdOp's in-tree kernels do not run on cuda:0"));
  }
}

}  // namespace
}  // namespace tileops::test_ops
