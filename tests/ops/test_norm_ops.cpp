// What is specific to the norm ops (RMSNormFwdOp, LayerNormFwdOp, FusedAddRMSNormFwdOp,
// ResidualRMSNormFwdOp) through the framework: kernel selection by row length, eps semantics,
// affine combinations the workloads do not list, rooflines, the composite's stages and the
// construction rules. Dtypes, out=, strides, empty and meta calls and the bad inputs every
// signature implies are the generic suite's (tests/ops/generic/). Oracles: references/norm.hpp
// (tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/norm/interface.hpp"
#include "norm.hpp"
#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops::test_ops {
namespace {

constexpr double kFloat32Eps = 1.1920928955078125e-07;  // 2^-23: eps = None (docs/manifest.md §4.1)

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

TEST(RMSNormOps, ServingKernelByRowLength) {
  std::uint32_t seed = 1;
  // 1000 and 1023 are served by the row-wise kernel, 1024 and 4097 by the blocked one.
  const std::pair<std::int64_t, const char*> cases[] = {
      {1, "rms_norm_rowwise_cpu"},    {7, "rms_norm_rowwise_cpu"},
      {33, "rms_norm_rowwise_cpu"},   {1023, "rms_norm_rowwise_cpu"},
      {1024, "rms_norm_blocked_cpu"}, {4097, "rms_norm_blocked_cpu"}};
  for (const auto& [n, key] : cases) {
    for (bool with_weight : {true, false}) {
      SCOPED_TRACE("n=" + std::to_string(n) + (with_weight ? " weight" : ""));
      RMSNormFwdOp op(Shape{n});
      const Tensor x = random_tensor({3, n}, DType::kBFloat16, seed++);
      const Tensor w = random_tensor({n}, DType::kBFloat16, seed++);
      const Tensor y = with_weight ? op(x, w) : op(x);
      const std::vector<double> wd = read(w);
      EXPECT_TRUE(all_close(
          read(y), references::rms_norm(read(x), with_weight ? &wd : nullptr, n, kFloat32Eps),
          tolerance_for(DType::kBFloat16)));
      EXPECT_EQ(only_key(op, "rms_norm"), key);
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
  EXPECT_TRUE(all_close(read(op(x, w)), references::rms_norm(read(x), &wd, 1024, 1e-5),
                        tolerance_for(DType::kBFloat16)));
  EXPECT_EQ(only_key(op, "rms_norm"), "rms_norm_blocked_cpu");

  RMSNormFwdOp small(Shape{3, 5}, 1e-5);
  const Tensor xs = random_tensor({2, 7, 3, 5}, DType::kFloat16, 13);
  const Tensor ws = random_tensor({3, 5}, DType::kFloat16, 14);
  const std::vector<double> wsd = read(ws);
  EXPECT_TRUE(all_close(read(small(xs, ws)), references::rms_norm(read(xs), &wsd, 15, 1e-5),
                        tolerance_for(DType::kFloat16)));
  EXPECT_EQ(only_key(small, "rms_norm"), "rms_norm_rowwise_cpu");
}

TEST(RMSNormOps, EpsNoneIsTheFloat32EpsilonForNarrowDTypes) {
  // eps left out is the manifest default None.
  EXPECT_TRUE(make_op("RMSNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{16})}})
                  ->param("eps")
                  .is_none());
  // Rows of tiny values: mean(x^2) ~ 1e-10, so eps decides the result; finfo(float16).eps would
  // give a very different answer.
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    RMSNormFwdOp op(Shape{16});
    const Tensor x = random_tensor({4, 16}, dtype, 31, 1e-5);
    EXPECT_TRUE(all_close(read(op(x)), references::rms_norm(read(x), nullptr, 16, kFloat32Eps),
                          tolerance_for(dtype)));
  }
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
  // A meta call has a roofline too.
  op(Tensor::meta({7, 4, 8}, DType::kBFloat16), Tensor::meta({4, 8}, DType::kBFloat16));
  EXPECT_EQ(op.eval_roofline().flops, 4 * 7 * 32);
}

// Op::check_call: what a tracer's fake kernel asks. The outputs of a call from its geometry alone,
// with nothing recorded, selected or run; a bad call raises as a real one does.
TEST(RMSNormOps, CheckCallStatesTheOutputsAndKeepsNothing) {
  RMSNormFwdOp op(Shape{8});
  const Tensor x = random_tensor({2, 8}, DType::kFloat32, 90);
  op(x);
  const std::optional<Tensor> inputs[] = {Tensor::empty({5, 3, 8}, DType::kBFloat16),
                                          Tensor::empty({8}, DType::kBFloat16)};
  const manifest::SignatureCall call = op.check_call(inputs);
  EXPECT_EQ(call.output(0).shape, (Shape{5, 3, 8}));
  EXPECT_EQ(call.output(0).dtype, DType::kBFloat16);
  EXPECT_EQ(op.last_call()->tensor("x").shape, (Shape{2, 8}));  // the real call's record stays
  EXPECT_EQ(op.built_entries("rms_norm").size(), 1u);           // the bf16 call built nothing
  const std::optional<Tensor> bad[] = {Tensor::empty({5, 7}, DType::kFloat32), std::nullopt};
  EXPECT_TRUE(throws_with<CheckError>(
      [&] { op.check_call(bad); },
      "RMSNormFwdOp: x shape does not match *normalized_shape: axes 1..1 of [5, 7] are [7], "
      "expected [8]"));
  const Tensor wrong_out = Tensor::empty({5, 3, 4}, DType::kBFloat16);
  EXPECT_TRUE(throws_containing<CheckError>([&] { op.check_call(inputs, &wrong_out); },
                                            "RMSNormFwdOp: out does not have the shape of output"));
}

TEST(RMSNormOps, BadConstruction) {
  EXPECT_TRUE(throws_with<CheckError>(
      [] { RMSNormFwdOp op(Shape{8}, std::numeric_limits<double>::infinity()); },
      "RMSNormFwdOp: param 'eps' = inf is not a float | None"));
  EXPECT_TRUE(throws_with<CheckError>([] { RMSNormFwdOp op(Shape{8}, std::nan("")); },
                                      "RMSNormFwdOp: param 'eps' = nan is not a float | None"));
  // len(normalized_shape) > 0 is a rule of the signature.
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        RMSNormFwdOp op{Shape{}};
        op(Tensor::empty({2, 3}, DType::kFloat32));
      },
      "RMSNormFwdOp: shape_rules[0]: len(normalized_shape) > 0"));
}

// ---- LayerNormFwdOp ----------------------------------------------------------------------------

TEST(LayerNormOps, AffineCombinationsAndRowLengths) {
  std::uint32_t seed = 100;
  for (std::int64_t n : {1, 5, 129, 2049}) {
    for (int affine = 0; affine < 4; ++affine) {
      const bool with_w = (affine & 1) != 0;
      const bool with_b = (affine & 2) != 0;
      SCOPED_TRACE("n=" + std::to_string(n) + " affine=" + std::to_string(affine));
      LayerNormFwdOp op(Shape{n}, 1e-5);
      // An offset mean: a variance computed as E[x^2] - E[x]^2 would cancel. n == 1: x - mean is
      // exactly 0, so the output is the bias (or 0).
      const Tensor x = random_tensor({3, n}, DType::kFloat32, seed++, 2.0, 0.5);
      const Tensor w = random_tensor({n}, DType::kFloat32, seed++);
      const Tensor b = random_tensor({n}, DType::kFloat32, seed++);
      const Tensor y = op(x, with_w ? std::optional<Tensor>(w) : std::nullopt,
                          with_b ? std::optional<Tensor>(b) : std::nullopt);
      const std::vector<double> wd = read(w);
      const std::vector<double> bd = read(b);
      EXPECT_TRUE(all_close(
          read(y),
          references::layer_norm(read(x), with_w ? &wd : nullptr, with_b ? &bd : nullptr, n, 1e-5),
          tolerance_for(DType::kFloat32)));
      EXPECT_EQ(only_key(op, "layer_norm"), "layer_norm_cpu");
    }
  }
}

TEST(LayerNormOps, DefaultEpsAndBiasWithoutWeight) {
  std::shared_ptr<Op> op =
      make_op("LayerNormFwdOp", ParamMap{{"normalized_shape", Value(Shape{3, 7})}});
  EXPECT_EQ(op->param("eps").as_float(), 1e-5);
  const Tensor x = random_tensor({4, 3, 7}, DType::kBFloat16, 111);
  const Tensor b = random_tensor({3, 7}, DType::kBFloat16, 113);
  const std::vector<double> bd = read(b);
  const std::optional<Tensor> bias_only[] = {x, std::nullopt, b};
  EXPECT_TRUE(all_close(read(*op->call(bias_only)[0]),
                        references::layer_norm(read(x), nullptr, &bd, 21, 1e-5),
                        tolerance_for(DType::kBFloat16)));
}

TEST(LayerNormOps, Roofline) {
  LayerNormFwdOp op(Shape{10}, 1e-6);
  const Tensor x = random_tensor({3, 10}, DType::kFloat32, 121);
  const Tensor w = random_tensor({10}, DType::kFloat32, 122);
  const Tensor b = random_tensor({10}, DType::kFloat32, 123);
  op(x, w, b);
  EXPECT_EQ(op.eval_roofline().flops, 7 * 30);
  EXPECT_EQ(op.eval_roofline().bytes,
            2 * nbytes({3, 10}, DType::kFloat32) + 2 * nbytes({10}, DType::kFloat32));
  op(x, std::nullopt, b);
  EXPECT_EQ(op.eval_roofline().flops, 6 * 30);
}

TEST(LayerNormOps, BadConstruction) {
  EXPECT_TRUE(throws_with<CheckError>(
      [] { LayerNormFwdOp bad(Shape{10}, -std::numeric_limits<double>::infinity()); },
      "LayerNormFwdOp: param 'eps' = -inf is not a float"));
  // eps is a float, not `float | None`.
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("LayerNormFwdOp",
                ParamMap{{"normalized_shape", Value(Shape{10})}, {"eps", Value()}});
      },
      "LayerNormFwdOp: param 'eps' = None is not a float"));
}

// ---- FusedAddRMSNormFwdOp ----------------------------------------------------------------------

TEST(FusedAddRMSNormOps, Roofline) {
  FusedAddRMSNormFwdOp op(1e-5);
  const Tensor x = random_tensor({4, 40}, DType::kBFloat16, 221);
  Tensor residual = random_tensor({4, 40}, DType::kBFloat16, 222);
  const Tensor w = random_tensor({40}, DType::kBFloat16, 223);
  op(x, residual, w);
  // 5 flops per element; x and weight read, residual read and written, output written.
  EXPECT_EQ(op.eval_roofline().flops, 5 * 160);
  EXPECT_EQ(op.eval_roofline().bytes,
            4 * nbytes({4, 40}, DType::kBFloat16) + nbytes({40}, DType::kBFloat16));
}

// ---- ResidualRMSNormFwdOp (composite) ----------------------------------------------------------

TEST(ResidualRMSNormOps, StagesDelegatesAndRoofline) {
  std::uint32_t seed = 300;
  for (bool with_weight : {true, false}) {
    SCOPED_TRACE(with_weight ? "weight" : "no weight");
    ResidualRMSNormFwdOp op(Shape{1030}, 1e-5);
    const Tensor x = random_tensor({3, 1030}, DType::kBFloat16, seed++);
    const Tensor residual = random_tensor({3, 1030}, DType::kBFloat16, seed++);
    const Tensor w = random_tensor({1030}, DType::kBFloat16, seed++);
    const auto [hidden, output] = with_weight ? op(x, residual, w) : op(x, residual);
    // The norm stage normalizes the add stage's (T-rounded) result.
    const std::vector<double> wd = read(w);
    EXPECT_TRUE(all_close(
        read(output), references::rms_norm(read(hidden), with_weight ? &wd : nullptr, 1030, 1e-5),
        tolerance_for(DType::kBFloat16)));

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

}  // namespace
}  // namespace tileops::test_ops
