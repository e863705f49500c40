// The norm ops through the framework (RMSNormFwdOp, LayerNormFwdOp, FusedAddRMSNormFwdOp,
// ResidualRMSNormFwdOp): typed and generic calls against float64 oracles written here, kernel
// selection, rooflines, and the typed errors of bad calls (tolerances: Note [CPU kernel
// tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/norm/interface.hpp"
#include "norm_oracles.hpp"
#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops::test_ops {
namespace {

constexpr double kFloat32Eps = 1.1920928955078125e-07;  // 2^-23: eps = None (docs/manifest.md §4.1)

using test_oracles::layer_norm_oracle;
using test_oracles::rms_norm_oracle;

// Rounds each value to `dtype` (round to nearest even), as storing it in a T tensor does.
std::vector<double> round_to(DType dtype, const std::vector<double>& values) {
  Tensor t = Tensor::empty({static_cast<std::int64_t>(values.size())}, dtype);
  write(t, values);
  return read(t);
}

std::vector<double> add(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> s(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
  return s;
}

// atol for a sum a + b rounded to T: float32 keeps 2^-24 of each term's magnitude.
std::vector<double> sum_atol(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> atol(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) atol[i] = 2e-7 * (std::abs(a[i]) + std::abs(b[i]));
  return atol;
}

kernels::NormCall norm_call(std::int64_t n, DType dtype = DType::kBFloat16) {
  kernels::NormCall c;
  c.device = Device::cpu();
  c.n = n;
  c.eps = kFloat32Eps;
  c.dtype = dtype;
  c.has_weight = true;
  return c;
}

std::string only_key(const Op& op, const char* interface) {
  std::vector<BuiltEntry> built = op.built_entries(interface);
  return built.size() == 1 ? built[0].key : "<" + std::to_string(built.size()) + " entries>";
}

// ---- RMSNormFwdOp ------------------------------------------------------------------------------

TEST(RMSNormOps, TypedCallMatchesOracleForEveryDTypeAndServingKernel) {
  std::uint32_t seed = 1;
  // 1000 and 1023 are served by the row-wise kernel, 1024 and 4097 by the blocked one.
  const std::pair<std::int64_t, const char*> cases[] = {
      {1, "rms_norm_rowwise_cpu"},    {7, "rms_norm_rowwise_cpu"},
      {33, "rms_norm_rowwise_cpu"},   {1023, "rms_norm_rowwise_cpu"},
      {1024, "rms_norm_blocked_cpu"}, {4097, "rms_norm_blocked_cpu"}};
  for (DType dtype : kFloatDTypes) {
    for (const auto& [n, key] : cases) {
      for (bool with_weight : {true, false}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " n=" + std::to_string(n) +
                     (with_weight ? " weight" : ""));
        RMSNormFwdOp op(Shape{n});
        const Tensor x = random_tensor({3, n}, dtype, seed++);
        const Tensor w = random_tensor({n}, dtype, seed++);
        const Tensor y = with_weight ? op(x, w) : op(x);
        ASSERT_EQ(y.shape(), (Shape{3, n}));
        ASSERT_EQ(y.dtype(), dtype);
        const std::vector<double> wd = read(w);
        EXPECT_TRUE(all_close(read(y),
                              rms_norm_oracle(read(x), with_weight ? &wd : nullptr, kFloat32Eps, n),
                              tolerance_for(dtype)));
        EXPECT_EQ(only_key(op, "rms_norm"), key);
      }
    }
  }
}

TEST(RMSNormOps, SelectionByRowLength) {
  RMSNormFwdOp op(Shape{8});
  EXPECT_EQ(op.key_for("rms_norm", norm_call(1023)), "rms_norm_rowwise_cpu");
  EXPECT_EQ(op.key_for("rms_norm", norm_call(1024)), "rms_norm_blocked_cpu");
  EXPECT_EQ(op.key_for("rms_norm", norm_call(16384)), "rms_norm_blocked_cpu");
  using Verdicts = std::vector<std::pair<std::string, std::string>>;
  // The CPU rows' verdicts (a CUDA build adds CUDA rows, which refuse a CPU call).
  auto cpu_verdicts = [&](std::int64_t n) {
    Verdicts all = op.verdicts("rms_norm", norm_call(n));
    std::erase_if(all, [](const auto& v) { return !v.first.ends_with("_cpu"); });
    return all;
  };
  EXPECT_EQ(cpu_verdicts(1000),
            (Verdicts{{"rms_norm_rowwise_cpu", ""},
                      {"rms_norm_blocked_cpu",
                       "rows of 1000 elements are shorter than the 1024 it is built for"}}));
  EXPECT_EQ(cpu_verdicts(1024),
            (Verdicts{{"rms_norm_rowwise_cpu", ""}, {"rms_norm_blocked_cpu", ""}}));
}

TEST(RMSNormOps, BothKernelsOfOneInstanceAgreeWithTheOracle) {
  // One instance over a multi-axis normalized shape; rows of 1024 go to the blocked kernel.
  RMSNormFwdOp op(Shape{4, 256}, 1e-5);
  const Tensor x = random_tensor({5, 4, 256}, DType::kBFloat16, 11, 3.0);
  const Tensor w = random_tensor({4, 256}, DType::kBFloat16, 12);
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(all_close(read(op(x, w)), rms_norm_oracle(read(x), &wd, 1e-5, 1024),
                        tolerance_for(DType::kBFloat16)));
  EXPECT_EQ(only_key(op, "rms_norm"), "rms_norm_blocked_cpu");

  RMSNormFwdOp small(Shape{3, 5}, 1e-5);
  const Tensor xs = random_tensor({2, 7, 3, 5}, DType::kFloat16, 13);
  const Tensor ws = random_tensor({3, 5}, DType::kFloat16, 14);
  const std::vector<double> wsd = read(ws);
  EXPECT_TRUE(all_close(read(small(xs, ws)), rms_norm_oracle(read(xs), &wsd, 1e-5, 15),
                        tolerance_for(DType::kFloat16)));
  EXPECT_EQ(only_key(small, "rms_norm"), "rms_norm_rowwise_cpu");
}

TEST(RMSNormOps, MakeOpAndGenericCall) {
  std::shared_ptr<Op> op = make_op(
      "RMSNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{33})}, {"eps", Value(1e-6)}});
  ASSERT_EQ(op->name(), "RMSNormFwdOp");
  const Tensor x = random_tensor({2, 3, 33}, DType::kFloat32, 21);
  const Tensor w = random_tensor({33}, DType::kFloat32, 22);
  const std::vector<double> wd = read(w);
  {
    const std::optional<Tensor> inputs[] = {x, w};
    CallResult r = op->call(inputs);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(all_close(read(*r[0]), rms_norm_oracle(read(x), &wd, 1e-6, 33),
                          tolerance_for(DType::kFloat32)));
  }
  {
    const std::optional<Tensor> inputs[] = {x, std::nullopt};
    CallResult r = op->call(inputs);
    EXPECT_TRUE(all_close(read(*r[0]), rms_norm_oracle(read(x), nullptr, 1e-6, 33),
                          tolerance_for(DType::kFloat32)));
  }
  // eps omitted: the manifest default None, the float32 epsilon.
  std::shared_ptr<Op> defaulted =
      make_op("RMSNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{33})}});
  EXPECT_TRUE(defaulted->param("eps").is_none());
  const std::optional<Tensor> inputs[] = {x, w};
  EXPECT_TRUE(all_close(read(*defaulted->call(inputs)[0]),
                        rms_norm_oracle(read(x), &wd, kFloat32Eps, 33),
                        tolerance_for(DType::kFloat32)));
}

TEST(RMSNormOps, EpsNoneIsTheFloat32EpsilonForNarrowDTypes) {
  // Rows of tiny values: mean(x^2) ~ 1e-10, so eps decides the result; finfo(float16).eps would
  // give a very different answer.
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    RMSNormFwdOp op(Shape{16});
    const Tensor x = random_tensor({4, 16}, dtype, 31, 1e-5);
    EXPECT_TRUE(all_close(read(op(x)), rms_norm_oracle(read(x), nullptr, kFloat32Eps, 16),
                          tolerance_for(dtype)));
  }
}

TEST(RMSNormOps, OutBufferIsTheResult) {
  RMSNormFwdOp op(Shape{37});
  const Tensor x = random_tensor({5, 37}, DType::kBFloat16, 41);
  const Tensor w = random_tensor({37}, DType::kBFloat16, 42);
  Tensor out = poisoned_tensor({5, 37}, DType::kBFloat16);
  const Tensor y = op(x, w, CallOptions{out});
  EXPECT_EQ(y.data_ptr(), out.data_ptr());
  EXPECT_EQ(y.storage(), out.storage());
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(all_close(read(out), rms_norm_oracle(read(x), &wd, kFloat32Eps, 37),
                        tolerance_for(DType::kBFloat16)));
}

TEST(RMSNormOps, NonContiguousInputs) {
  for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
    for (std::int64_t n : {19, 1100}) {
      SCOPED_TRACE("n=" + std::to_string(n) +
                   (layout == Layout::kStrided ? " strided" : " transposed"));
      RMSNormFwdOp op(Shape{n}, 1e-5);
      const Tensor x = noncontiguous_random({6, n}, DType::kFloat32, 51, layout);
      const Tensor w = noncontiguous_random({n}, DType::kFloat32, 52, Layout::kStrided);
      ASSERT_FALSE(x.is_contiguous());
      ASSERT_FALSE(w.is_contiguous());
      const std::vector<double> wd = read(w);
      EXPECT_TRUE(all_close(read(op(x, w)), rms_norm_oracle(read(x), &wd, 1e-5, n),
                            tolerance_for(DType::kFloat32)));
    }
  }
}

TEST(RMSNormOps, EmptyBatchRunsNoKernel) {
  RMSNormFwdOp op(Shape{64});
  const Tensor x = Tensor::empty({0, 64}, DType::kFloat16);
  const Tensor w = random_tensor({64}, DType::kFloat16, 61);
  const Tensor y = op(x, w);
  EXPECT_EQ(y.shape(), (Shape{0, 64}));
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_TRUE(op.built_entries("rms_norm").empty());
  // Out given for an empty call is still the result.
  Tensor out = Tensor::empty({0, 64}, DType::kFloat16);
  EXPECT_EQ(op(x, w, CallOptions{out}).storage(), out.storage());
}

TEST(RMSNormOps, RooflineOfTheLastCall) {
  RMSNormFwdOp op(Shape{4, 8});
  const Tensor x = random_tensor({3, 5, 4, 8}, DType::kBFloat16, 71);
  const Tensor w = random_tensor({4, 8}, DType::kBFloat16, 72);
  op(x, w);
  manifest::RooflineResult r = op.eval_roofline();
  EXPECT_EQ(r.flops, 4 * 15 * 32);
  // Derived bytes: x and weight read once, output written once.
  EXPECT_EQ(r.bytes, 2 * nbytes({3, 5, 4, 8}, DType::kBFloat16) + nbytes({4, 8}, DType::kBFloat16));
  op(x);
  r = op.eval_roofline();
  EXPECT_EQ(r.flops, 3 * 15 * 32);
  EXPECT_EQ(r.bytes, 2 * nbytes({3, 5, 4, 8}, DType::kBFloat16));
}

TEST(RMSNormOps, MetaCallInfersTheOutputAndRunsNothing) {
  RMSNormFwdOp op(Shape{4096});
  const Tensor y =
      op(Tensor::meta({7, 4096}, DType::kBFloat16), Tensor::meta({4096}, DType::kBFloat16));
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.shape(), (Shape{7, 4096}));
  EXPECT_EQ(y.dtype(), DType::kBFloat16);
  EXPECT_TRUE(op.built_entries("rms_norm").empty());
  EXPECT_EQ(op.eval_roofline().flops, 4 * 7 * 4096);
}

// Runs a good call on `op` and checks it against the oracle: the instance survived a failure.
void expect_usable(RMSNormFwdOp& op, std::int64_t n, std::uint32_t seed) {
  const Tensor x = random_tensor({2, n}, DType::kFloat32, seed);
  const Tensor w = random_tensor({n}, DType::kFloat32, seed + 1);
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(all_close(read(op(x, w)), rms_norm_oracle(read(x), &wd, kFloat32Eps, n),
                        tolerance_for(DType::kFloat32)));
}

TEST(RMSNormOps, BadCallsRaiseTypedErrorsAndLeaveTheInstanceUsable) {
  RMSNormFwdOp op(Shape{16});
  const Tensor x = random_tensor({2, 16}, DType::kFloat32, 81);
  const Tensor w = random_tensor({16}, DType::kFloat32, 82);
  const Tensor xi = Tensor::empty({2, 16}, DType::kInt32);
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { op(xi); }, "RMSNormFwdOp: x dtype is outside [float16, bfloat16, float32]; got int32"));
  expect_usable(op, 16, 83);
  EXPECT_TRUE(
      throws_with<CheckError>([&] { op(x, random_tensor({16}, DType::kFloat16, 84)); },
                              "RMSNormFwdOp: weight dtype differs from T (float32); got float16"));
  expect_usable(op, 16, 85);
  // The trailing axes must be normalized_shape.
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        op(random_tensor({2, 15}, DType::kFloat32, 86));
      },
      "RMSNormFwdOp: "));
  expect_usable(op, 16, 87);
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        op(x, random_tensor({2, 16}, DType::kFloat32, 88));
      },
      "RMSNormFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([&] { op(random_tensor({}, DType::kFloat32, 89)); },
                                            "RMSNormFwdOp: "));
  expect_usable(op, 16, 90);
  // Tensors on two devices.
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { op(x, Tensor::meta({16}, DType::kFloat32)); },
      "RMSNormFwdOp: needs every tensor on one device; got [x on cpu, weight on meta]"));
  expect_usable(op, 16, 91);
  // Out buffers of the wrong shape or dtype, or sharing an input's storage.
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, w, CallOptions{Tensor::empty({2, 15}, DType::kFloat32)});
      },
      "RMSNormFwdOp: out does not have the shape of output: got [2, 15], expected [2, 16]"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(x, w, CallOptions{Tensor::empty({2, 16}, DType::kFloat16)});
      },
      "RMSNormFwdOp: out dtype is not the dtype of output: got float16, expected float32"));
  Tensor xc = random_tensor({2, 16}, DType::kFloat32, 92);
  const std::vector<double> before = read(xc);
  EXPECT_TRUE(throws_with<CheckError>([&] { op(xc, w, CallOptions{xc}); },
                                      "RMSNormFwdOp: out shares storage with input x"));
  EXPECT_EQ(read(xc), before);
  expect_usable(op, 16, 93);
}

TEST(RMSNormOps, BadConstruction) {
  EXPECT_TRUE(throws_containing<CheckError>(
      [] { RMSNormFwdOp op(Shape{8}, std::numeric_limits<double>::infinity()); },
      "RMSNormFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([] { RMSNormFwdOp op(Shape{8}, std::nan("")); },
                                            "RMSNormFwdOp: "));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("RMSNormFwdOp",
                ParamMap{{"normalized_shape", Value(Shape{8})}, {"epsilon", Value(1e-5)}});
      },
      "RMSNormFwdOp: unknown param 'epsilon'"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("RMSNormFwdOp", ParamMap{{"eps", Value(1e-5)}});
      },
      "RMSNormFwdOp: param 'normalized_shape' is required"));
  // len(normalized_shape) > 0 is a rule of the signature.
  EXPECT_TRUE(throws_containing<CheckError>(
      [] {
        RMSNormFwdOp op{Shape{}};
        op(Tensor::empty({2, 3}, DType::kFloat32));
      },
      "RMSNormFwdOp: "));
}

TEST(RMSNormOps, CudaInputIsRefusedAndNothingIsWritten) {
  RMSNormFwdOp op(Shape{16});
  if (has_cuda_kernels(op)) GTEST_SKIP() << "CUDA kernels serve cuda:0 here; see tests/cuda";
  CudaDescriptor x = cuda_descriptor({2, 16}, DType::kFloat32);
  CudaDescriptor w = cuda_descriptor({16}, DType::kFloat32);
  CudaDescriptor out = cuda_descriptor({2, 16}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] { op(x.tensor, w.tensor, CallOptions{out.tensor}); },
      "RMSNormFwdOp's in-tree kernels do not run on cuda:0"));
  EXPECT_TRUE(all_bytes_are(*x.bytes, 0xAB));
  EXPECT_TRUE(all_bytes_are(*out.bytes, 0xAB));
  EXPECT_TRUE(op.built_entries("rms_norm").empty());
  expect_usable(op, 16, 95);
}

TEST(RMSNormOps, StridedCudaInputFailsOnAvailabilityBeforeAnyCopy) {
  RMSNormFwdOp op(Shape{16});
  if (has_cuda_kernels(op)) GTEST_SKIP() << "CUDA kernels serve cuda:0 here; see tests/cuda";
  CudaDescriptor x = cuda_descriptor({16, 4}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] {
        op(x.tensor.as_strided({4, 16}, {1, 4}, 0));
      },
      "RMSNormFwdOp's in-tree kernels do not run on cuda:0"));
  FusedAddRMSNormFwdOp fused;
  CudaDescriptor y = cuda_descriptor({4, 16}, DType::kFloat32);
  CudaDescriptor w = cuda_descriptor({16}, DType::kFloat32);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] {
        fused(y.tensor, x.tensor.as_strided({4, 16}, {1, 4}, 0), w.tensor);
      },
      "FusedAddRMSNormFwdOp's in-tree kernels do not run on cuda:0"));
  EXPECT_TRUE(all_bytes_are(*x.bytes, 0xAB));
}

TEST(RMSNormOps, StridedOrReadOnlyWrittenTensorsAreRefused) {
  RMSNormFwdOp op(Shape{4});
  const Tensor x = random_tensor({4, 4}, DType::kFloat32, 96);
  const Tensor strided_out = Tensor::empty({4, 8}, DType::kFloat32).as_strided({4, 4}, {8, 1}, 0);
  EXPECT_TRUE(throws_with<CheckError>([&] { op(x, std::nullopt, CallOptions{strided_out}); },
                                      "RMSNormFwdOp: out must be contiguous"));
  FusedAddRMSNormFwdOp fused;
  const Tensor r = random_tensor({4, 4}, DType::kFloat32, 97);
  const Tensor read_only = Tensor::from_blob(r.data_ptr(), {4, 4}, {4, 1}, DType::kFloat32,
                                             Device::cpu(), r.storage(), true);
  EXPECT_TRUE(
      throws_with<CheckError>([&] { fused(x, read_only, random_tensor({4}, DType::kFloat32, 98)); },
                              "FusedAddRMSNormFwdOp: residual is written but read-only"));
}

// ---- LayerNormFwdOp ----------------------------------------------------------------------------

TEST(LayerNormOps, TypedCallMatchesOracle) {
  std::uint32_t seed = 100;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : {1, 5, 129, 2049}) {
      for (int affine = 0; affine < 4; ++affine) {
        const bool with_w = (affine & 1) != 0;
        const bool with_b = (affine & 2) != 0;
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " n=" + std::to_string(n) +
                     " affine=" + std::to_string(affine));
        LayerNormFwdOp op(Shape{n}, 1e-5);
        const Tensor x = random_tensor({3, n}, dtype, seed++, 2.0, 0.5);
        const Tensor w = random_tensor({n}, dtype, seed++);
        const Tensor b = random_tensor({n}, dtype, seed++);
        const Tensor y = op(x, with_w ? std::optional<Tensor>(w) : std::nullopt,
                            with_b ? std::optional<Tensor>(b) : std::nullopt);
        const std::vector<double> wd = read(w);
        const std::vector<double> bd = read(b);
        EXPECT_TRUE(all_close(
            read(y),
            layer_norm_oracle(read(x), with_w ? &wd : nullptr, with_b ? &bd : nullptr, 1e-5, n),
            tolerance_for(dtype)));
        EXPECT_EQ(only_key(op, "layer_norm"), "layer_norm_cpu");
      }
    }
  }
}

TEST(LayerNormOps, MakeOpGenericCallOutAndNonContiguous) {
  std::shared_ptr<Op> op =
      make_op("LayerNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{3, 7})}});
  EXPECT_EQ(op->param("eps").as_float(), 1e-5);
  const Tensor x = noncontiguous_random({4, 3, 7}, DType::kBFloat16, 111, Layout::kTransposed);
  const Tensor w = noncontiguous_random({3, 7}, DType::kBFloat16, 112, Layout::kStrided);
  const Tensor b = random_tensor({3, 7}, DType::kBFloat16, 113);
  Tensor out = poisoned_tensor({4, 3, 7}, DType::kBFloat16);
  const std::optional<Tensor> inputs[] = {x, w, b};
  CallResult r = op->call(inputs, CallOptions{out});
  EXPECT_EQ(r.at(0)->storage(), out.storage());
  const std::vector<double> wd = read(w);
  const std::vector<double> bd = read(b);
  EXPECT_TRUE(all_close(read(out), layer_norm_oracle(read(x), &wd, &bd, 1e-5, 21),
                        tolerance_for(DType::kBFloat16)));
  // Bias without weight through the generic call.
  const std::optional<Tensor> bias_only[] = {x, std::nullopt, b};
  EXPECT_TRUE(all_close(read(*op->call(bias_only)[0]),
                        layer_norm_oracle(read(x), nullptr, &bd, 1e-5, 21),
                        tolerance_for(DType::kBFloat16)));
}

TEST(LayerNormOps, EmptyRooflineAndErrors) {
  LayerNormFwdOp op(Shape{10}, 1e-6);
  EXPECT_EQ(op(Tensor::empty({0, 10}, DType::kFloat32)).shape(), (Shape{0, 10}));
  EXPECT_TRUE(op.built_entries("layer_norm").empty());

  const Tensor x = random_tensor({3, 10}, DType::kFloat32, 121);
  const Tensor w = random_tensor({10}, DType::kFloat32, 122);
  const Tensor b = random_tensor({10}, DType::kFloat32, 123);
  op(x, w, b);
  EXPECT_EQ(op.eval_roofline().flops, 7 * 30);
  EXPECT_EQ(op.eval_roofline().bytes,
            2 * nbytes({3, 10}, DType::kFloat32) + 2 * nbytes({10}, DType::kFloat32));
  op(x, std::nullopt, b);
  EXPECT_EQ(op.eval_roofline().flops, 6 * 30);

  EXPECT_TRUE(
      throws_with<CheckError>([&] { op(x, w, Tensor::empty({10}, DType::kBFloat16)); },
                              "LayerNormFwdOp: bias dtype differs from T (float32); got bfloat16"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(Tensor::empty({3, 10}, DType::kInt64));
      },
      "LayerNormFwdOp: x dtype is outside [float16, bfloat16, float32]; got int64"));
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] { op(x, std::nullopt, random_tensor({9}, DType::kFloat32, 124)); }, "LayerNormFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>(
      [] { LayerNormFwdOp bad(Shape{10}, -std::numeric_limits<double>::infinity()); },
      "LayerNormFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>(
      [] {
        make_op("LayerNormFwdOp",
                ParamMap{{"normalized_shape", Value(Shape{10})}, {"eps", Value()}});
      },
      "LayerNormFwdOp: "));
  const std::vector<double> wd = read(w);
  const std::vector<double> bd = read(b);
  EXPECT_TRUE(all_close(read(op(x, w, b)), layer_norm_oracle(read(x), &wd, &bd, 1e-6, 10),
                        tolerance_for(DType::kFloat32)));
}

// ---- FusedAddRMSNormFwdOp ----------------------------------------------------------------------

void check_fused_add(FusedAddRMSNormFwdOp& op, const Tensor& x, const Tensor& residual,
                     const Tensor& w, double eps, const CallOptions& options = {}) {
  const DType dtype = x.dtype();
  const std::int64_t n = x.shape().back();
  const std::vector<double> xd = read(x);
  const std::vector<double> rd = read(residual);
  const Tensor y = op(x, residual, w, options);
  // residual <- T(x + residual), read through the caller's view.
  const std::vector<double> sum = add(xd, rd);
  EXPECT_TRUE(
      all_close(read(residual), round_to(dtype, sum), tolerance_for(dtype), sum_atol(xd, rd)));
  // x is only read.
  EXPECT_EQ(read(x), xd);
  // The output normalizes the stored, T-rounded residual.
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(
      all_close(read(y), rms_norm_oracle(read(residual), &wd, eps, n), tolerance_for(dtype)));
}

TEST(FusedAddRMSNormOps, ResidualUpdatedInPlaceAndOutputMatchesOracle) {
  std::uint32_t seed = 200;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : {1, 9, 1031}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " n=" + std::to_string(n));
      FusedAddRMSNormFwdOp op;
      const Tensor x = random_tensor({2, 3, n}, dtype, seed++);
      Tensor residual = random_tensor({2, 3, n}, dtype, seed++, 2.0);
      const void* residual_data = residual.data_ptr();
      check_fused_add(op, x, residual, random_tensor({n}, dtype, seed++), kFloat32Eps);
      EXPECT_EQ(residual.data_ptr(), residual_data);
      EXPECT_EQ(only_key(op, "fused_add_rms_norm"), "fused_add_rms_norm_cpu");
    }
  }
}

TEST(FusedAddRMSNormOps, NonContiguousResidualAndInputs) {
  FusedAddRMSNormFwdOp op(1e-6);
  const Tensor x = noncontiguous_random({5, 17}, DType::kFloat16, 211, Layout::kTransposed);
  const Tensor residual = noncontiguous_random({5, 17}, DType::kFloat16, 212, Layout::kStrided);
  const Tensor w = noncontiguous_random({17}, DType::kFloat16, 213, Layout::kStrided);
  check_fused_add(op, x, residual, w, 1e-6);
  // The storage between the residual's elements is untouched (still the poison pattern).
  const Tensor whole = residual.as_strided({5, 34}, {34, 1}, 0);
  const std::vector<double> all = read(whole);
  for (std::int64_t r = 0; r < 5; ++r)
    for (std::int64_t c = 1; c < 34; c += 2)
      EXPECT_TRUE(std::isnan(all[r * 34 + c])) << r << "," << c;

  // A transposed residual too.
  const Tensor transposed =
      noncontiguous_random({5, 17}, DType::kFloat16, 214, Layout::kTransposed);
  check_fused_add(op, random_tensor({5, 17}, DType::kFloat16, 215), transposed,
                  random_tensor({17}, DType::kFloat16, 216), 1e-6);
}

TEST(FusedAddRMSNormOps, MakeOpGenericCallAndOut) {
  std::shared_ptr<Op> op = make_op("FusedAddRMSNormFwdOp", ParamMap{{"eps", Value(1e-5)}});
  const Tensor x = random_tensor({4, 40}, DType::kBFloat16, 221);
  Tensor residual = random_tensor({4, 40}, DType::kBFloat16, 222);
  const Tensor w = random_tensor({40}, DType::kBFloat16, 223);
  const std::vector<double> xd = read(x);
  const std::vector<double> rd = read(residual);
  Tensor out = poisoned_tensor({4, 40}, DType::kBFloat16);
  const std::optional<Tensor> inputs[] = {x, residual, w};
  CallResult r = op->call(inputs, CallOptions{out});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->storage(), out.storage());
  const std::vector<double> sum = add(xd, rd);
  EXPECT_TRUE(all_close(read(residual), round_to(DType::kBFloat16, sum),
                        tolerance_for(DType::kBFloat16), sum_atol(xd, rd)));
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(all_close(read(out), rms_norm_oracle(read(residual), &wd, 1e-5, 40),
                        tolerance_for(DType::kBFloat16)));
  // Roofline: 5 flops per element; x and weight read, residual read and written, output written.
  EXPECT_EQ(op->eval_roofline().flops, 5 * 160);
  EXPECT_EQ(op->eval_roofline().bytes,
            4 * nbytes({4, 40}, DType::kBFloat16) + nbytes({40}, DType::kBFloat16));
}

TEST(FusedAddRMSNormOps, EmptyMetaAndErrors) {
  FusedAddRMSNormFwdOp op;
  const Tensor y =
      op(Tensor::empty({0, 8}, DType::kFloat32), Tensor::empty({0, 8}, DType::kFloat32),
         random_tensor({8}, DType::kFloat32, 231));
  EXPECT_EQ(y.shape(), (Shape{0, 8}));
  const Tensor m = op(Tensor::meta({3, 8}, DType::kFloat16), Tensor::meta({3, 8}, DType::kFloat16),
                      Tensor::meta({8}, DType::kFloat16));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{3, 8}));
  EXPECT_TRUE(op.built_entries("fused_add_rms_norm").empty());

  const Tensor x = random_tensor({3, 8}, DType::kFloat32, 232);
  Tensor residual = random_tensor({3, 8}, DType::kFloat32, 233);
  const Tensor w = random_tensor({8}, DType::kFloat32, 234);
  const std::vector<double> rd = read(residual);
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { op(x, residual, random_tensor({8}, DType::kBFloat16, 235)); },
      "FusedAddRMSNormFwdOp: weight dtype differs from T (float32); got bfloat16"));
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] { op(x, residual, random_tensor({9}, DType::kFloat32, 236)); },
      "FusedAddRMSNormFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        op(x, random_tensor({3, 9}, DType::kFloat32, 237), w);
      },
      "FusedAddRMSNormFwdOp: "));
  // The written residual may not share storage with x.
  EXPECT_TRUE(
      throws_containing<CheckError>([&] { op(residual, residual, w); }, "FusedAddRMSNormFwdOp: "));
  EXPECT_TRUE(
      throws_with<CheckError>([&] { op(x, residual, w, CallOptions{residual}); },
                              "FusedAddRMSNormFwdOp: out shares storage with input residual"));
  EXPECT_EQ(read(residual), rd);  // no failed call wrote it

  if (!has_cuda_kernels(op)) {
    CudaDescriptor cx = cuda_descriptor({3, 8}, DType::kFloat32);
    CudaDescriptor cr = cuda_descriptor({3, 8}, DType::kFloat32);
    CudaDescriptor cw = cuda_descriptor({8}, DType::kFloat32);
    EXPECT_TRUE(throws_containing<OpNotAvailableError>(
        [&] { op(cx.tensor, cr.tensor, cw.tensor); },
        "FusedAddRMSNormFwdOp's in-tree kernels do not run on cuda:0"));
    EXPECT_TRUE(all_bytes_are(*cr.bytes, 0xAB));
  }
  check_fused_add(op, x, residual, w, kFloat32Eps);
}

// ---- ResidualRMSNormFwdOp (composite) ----------------------------------------------------------

TEST(ResidualRMSNormOps, BothOutputsStagesAndDelegates) {
  std::uint32_t seed = 300;
  for (DType dtype : kFloatDTypes) {
    for (bool with_weight : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (with_weight ? " weight" : ""));
      ResidualRMSNormFwdOp op(Shape{1030}, 1e-5);
      const Tensor x = random_tensor({3, 1030}, dtype, seed++);
      const Tensor residual = random_tensor({3, 1030}, dtype, seed++);
      const Tensor w = random_tensor({1030}, dtype, seed++);
      const std::vector<double> rd = read(residual);
      const auto [hidden, output] = with_weight ? op(x, residual, w) : op(x, residual);
      const std::vector<double> sum = add(read(x), rd);
      EXPECT_TRUE(all_close(read(hidden), round_to(dtype, sum), tolerance_for(dtype),
                            sum_atol(read(x), rd)));
      EXPECT_EQ(read(residual), rd);  // the unfused block does not write its inputs
      const std::vector<double> wd = read(w);
      EXPECT_TRUE(all_close(read(output),
                            rms_norm_oracle(read(hidden), with_weight ? &wd : nullptr, 1e-5, 1030),
                            tolerance_for(dtype)));

      const manifest::StageCalls& stages = op.last_call()->stages();
      ASSERT_EQ(stages.size(), 2u);
      EXPECT_EQ(stages[0].first, "add");
      EXPECT_EQ(stages[0].second.size(), 1u);
      EXPECT_EQ(stages[1].first, "norm");
      EXPECT_EQ(stages[1].second.size(), 1u);
      std::vector<std::shared_ptr<Op>> held = op.held_delegates();
      ASSERT_EQ(held.size(), 2u);
      EXPECT_EQ(held[0]->name(), "AddFwdOp");
      EXPECT_EQ(held[1]->name(), "RMSNormFwdOp");
      EXPECT_EQ(only_key(*held[1], "rms_norm"), "rms_norm_blocked_cpu");
      EXPECT_EQ(op.eval_roofline().flops, (with_weight ? 5 : 4) * 3 * 1030);
    }
  }
}

TEST(ResidualRMSNormOps, MakeOpNonContiguousAndErrors) {
  std::shared_ptr<Op> op =
      make_op("ResidualRMSNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{2, 9})}});
  const Tensor x = noncontiguous_random({4, 2, 9}, DType::kFloat32, 311, Layout::kTransposed);
  const Tensor residual = noncontiguous_random({4, 2, 9}, DType::kFloat32, 312, Layout::kStrided);
  const Tensor w = random_tensor({2, 9}, DType::kFloat32, 313);
  const std::optional<Tensor> inputs[] = {x, residual, w};
  CallResult r = op->call(inputs);
  ASSERT_EQ(r.size(), 2u);
  const std::vector<double> sum = add(read(x), read(residual));
  EXPECT_TRUE(all_close(read(*r[0]), sum, tolerance_for(DType::kFloat32),
                        sum_atol(read(x), read(residual))));
  const std::vector<double> wd = read(w);
  EXPECT_TRUE(all_close(read(*r[1]), rms_norm_oracle(read(*r[0]), &wd, kFloat32Eps, 18),
                        tolerance_for(DType::kFloat32)));

  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        const std::optional<Tensor> bad[] = {x, random_tensor({4, 2, 9}, DType::kBFloat16, 314), w};
        op->call(bad);
      },
      "ResidualRMSNormFwdOp: residual dtype differs from T (float32); got bfloat16"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        const std::optional<Tensor> bad[] = {x, residual, w};
        op->call(bad, CallOptions{Tensor::empty({4, 2, 9}, DType::kFloat32)});
      },
      "ResidualRMSNormFwdOp: takes no out buffer"));
  CallResult again = op->call(inputs);
  EXPECT_TRUE(all_close(read(*again[1]), read(*r[1]), {0.0, 0.0}));

  // Empty and meta calls produce both outputs without running a stage.
  const std::optional<Tensor> empty[] = {Tensor::empty({0, 2, 9}, DType::kFloat32),
                                         Tensor::empty({0, 2, 9}, DType::kFloat32), std::nullopt};
  CallResult e = op->call(empty);
  EXPECT_EQ(e.at(0)->shape(), (Shape{0, 2, 9}));
  EXPECT_EQ(e.at(1)->shape(), (Shape{0, 2, 9}));
  const std::optional<Tensor> meta[] = {Tensor::meta({3, 2, 9}, DType::kFloat16),
                                        Tensor::meta({3, 2, 9}, DType::kFloat16), std::nullopt};
  CallResult m = op->call(meta);
  EXPECT_TRUE(m.at(0)->is_meta());
  EXPECT_TRUE(m.at(1)->is_meta());
  EXPECT_EQ(m.at(1)->shape(), (Shape{3, 2, 9}));
}

}  // namespace
}  // namespace tileops::test_ops
