// Effect branches, operator names and roofline evaluation (docs/manifest.md §7).
#include <gtest/gtest.h>

#include "common/toy_entries.hpp"
#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::builtin_plan;
using testing::cpu;
using testing::Inputs;
using testing::meta;
using testing::plan_from;

TEST(OperatorStem, SplitsCamelCaseAndKeepsAbbreviationsWhole) {
  EXPECT_EQ(SignaturePlan::operator_stem("norm", "RMSNormFwdOp"), "norm_rms_norm_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("moe", "MoEGroupedGemmFwdOp"), "moe_grouped_gemm_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("rope", "RopeFwdOp"), "rope_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("activation", "SiluAndMulFwdOp"),
            "activation_silu_and_mul_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("attention", "GQADecodeFwdOp"),
            "attention_gqa_decode_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("gemm", "GemmW4A16FwdOp"), "gemm_w4a16_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("norm", "FusedAddRMSNormFwdOp"),
            "norm_fused_add_rms_norm_fwd");
}

TEST(OperatorStem, FamilyIsNotRepeatedWhenTheStemStartsWithIt) {
  EXPECT_EQ(SignaturePlan::operator_stem("rope", "RopeFwdOp"), "rope_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("moe", "MoEFwdOp"), "moe_fwd");
  EXPECT_EQ(SignaturePlan::operator_stem("norm", "NormalizeFwdOp"), "norm_normalize_fwd");
}

TEST(EffectBranch, PlainCallOfRmsNorm) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{8})}});
  EffectBranch b =
      p->effect_branch(state, p->presence_of(Inputs{cpu({2, 8}), std::nullopt}, false));
  EXPECT_EQ(b.operator_name, "tileops::norm_rms_norm_fwd");
  EXPECT_TRUE(b.written.empty());
  EXPECT_FALSE(b.has_out);
  EXPECT_EQ(b.emitted, (std::vector<std::string>{"output"}));
}

TEST(EffectBranch, OutAddsTheOutSuffix) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{8})}});
  EffectBranch b = p->effect_branch(state, p->presence_of(Inputs{cpu({2, 8}), cpu({8})}, true));
  EXPECT_EQ(b.operator_name, "tileops::norm_rms_norm_fwd_out");
  EXPECT_TRUE(b.has_out);
}

TEST(EffectBranch, OptionalInputPresenceDoesNotChangeTheOperator) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{8})}});
  EXPECT_EQ(p->effect_branch(state, p->presence_of(Inputs{cpu({2, 8}), cpu({8})}, false)),
            p->effect_branch(state, p->presence_of(Inputs{cpu({2, 8}), std::nullopt}, false)));
}

TEST(EffectBranch, MutatedInputAddsAWritesSuffix) {
  auto p = builtin_plan("FusedAddRMSNormFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(p->effect_branch(state, 0).operator_name,
            "tileops::norm_fused_add_rms_norm_fwd_writes_residual");
  EXPECT_EQ(p->effect_branch(state, 1).operator_name,
            "tileops::norm_fused_add_rms_norm_fwd_writes_residual_out");
  EXPECT_EQ(p->effect_branch(state, 0).written, (std::vector<std::string>{"residual"}));
}

TEST(EffectBranch, WrittenInputsAreSortedInTheName) {
  auto p = builtin_plan("RopeFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(p->effect_branch(state, 0).operator_name, "tileops::rope_fwd_writes_key_writes_query");
  EXPECT_TRUE(p->effect_branch(state, 0).emitted.empty());
}

const std::string kToy =
    test_common::toy_entry(test_common::kInplaceEntry, "InplaceFwdOp") + R"yaml(
ScoreFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim}
    params:
      scale: {type: float, default: 0.5}
    inputs:
      a: {dtype: float32, shape: "[M, N]"}
      b: {dtype: float16, shape: "[N]", optional: true}
    outputs:
      c: {dtype: float32, shape: "[M]"}
  workloads: [{label: w, M: 2, N: 3}]
  roofline:
    flops: "M * N * (2 if present(b) else 1)"
    bytes: "bytes(a) + (bytes(b) if present(b) else 0) + 2 * bytes(c)"
)yaml";

TEST(EffectBranch, MutatedExpressionDecidesPerConstructionPoint) {
  auto p = plan_from(kToy, "InplaceFwdOp");
  auto in_place = p->construct({{"inplace", Value(true)}});
  auto fresh = p->construct({{"inplace", Value(false)}});
  EXPECT_EQ(p->effect_branch(in_place, 0).operator_name, "tileops::toy_inplace_fwd_writes_x");
  EXPECT_EQ(p->effect_branch(fresh, 0).operator_name, "tileops::toy_inplace_fwd");
  EXPECT_NE(in_place.point, fresh.point);
  EXPECT_EQ(p->construct({{"inplace", Value(true)}}).point, in_place.point);
}

TEST(EffectBranch, PresenceOutsideTheSignatureIsRefused) {
  auto p = plan_from(kToy, "InplaceFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(testing::check_error([&] { p->effect_branch(state, 2); }),
            "InplaceFwdOp: presence key 2 is outside the signature");
}

TEST(Roofline, InlineFlopsWithDerivedBytes) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{4096})}});
  auto with_weight =
      p->check(state, Inputs{meta({16, 4096}, DType::kBFloat16), meta({4096}, DType::kBFloat16)});
  RooflineResult r = p->eval_roofline(with_weight);
  EXPECT_EQ(r.flops, 4 * 16 * 4096);
  EXPECT_EQ(r.bytes, 2 * (16 * 4096 * 2) + 4096 * 2);
  auto without = p->check(state, Inputs{meta({16, 4096}, DType::kBFloat16), std::nullopt});
  EXPECT_EQ(p->eval_roofline(without).flops, 3 * 16 * 4096);
  EXPECT_EQ(p->eval_roofline(without).bytes, 2 * (16 * 4096 * 2));
}

TEST(Roofline, ExplicitBytesReadTensorSizes) {
  auto p = plan_from(kToy, "ScoreFwdOp");
  auto state = p->construct({});
  auto call = p->check(state, Inputs{meta({2, 3}, DType::kFloat32), meta({3}, DType::kFloat16)});
  RooflineResult r = p->eval_roofline(call);
  EXPECT_EQ(r.flops, 12);
  EXPECT_EQ(r.bytes, 24 + 6 + 2 * 8);
  auto no_b = p->check(state, Inputs{meta({2, 3}, DType::kFloat32), std::nullopt});
  EXPECT_EQ(p->eval_roofline(no_b).flops, 6);
  EXPECT_EQ(p->eval_roofline(no_b).bytes, 24 + 2 * 8);
}

TEST(Roofline, BuiltinRopeCountsOnlyTheRotatedColumns) {
  auto p = builtin_plan("RopeFwdOp");
  auto state = p->construct({});
  auto call = p->check(
      state, Inputs{meta({4}, DType::kInt64), meta({4, 8, 128}, DType::kBFloat16),
                    meta({4, 2, 128}, DType::kBFloat16), meta({1024, 64}, DType::kBFloat16)});
  RooflineResult r = p->eval_roofline(call);
  EXPECT_EQ(r.flops, 3 * 4 * (8 + 2) * 64);
  const std::int64_t positions = 4 * 8;
  const std::int64_t qk = 2 * (4 * 8 * 128 * 2 + 4 * 2 * 128 * 2) / 128 * 64;
  const std::int64_t cache_rows = 1024 * 64 * 2 / 1024 * 4;
  EXPECT_EQ(r.bytes, positions + qk + cache_rows);
}

// eval_roofline raises CheckError naming the op and the formula when a formula fails to evaluate
// (the evaluator's EvalError, wrapped), as every other check of the plan does.
TEST(Roofline, AFormulaThatOverflowsIsACheckErrorNamingTheField) {
  constexpr std::string_view kCubic = R"yaml(
CubicFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim}
    inputs:
      x: {dtype: float16, shape: "[N]"}
    outputs:
      y: {dtype: float16, shape: "[N]"}
  workloads: [{label: w, N: 4}]
  roofline: {flops: "N * N * N"}
)yaml";
  auto p = plan_from(kCubic, "CubicFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(p->eval_roofline(p->check(state, Inputs{meta({1 << 10})})).flops, 1 << 30);
  const SignatureCall huge = p->check(state, Inputs{meta({std::int64_t{1} << 22})});
  EXPECT_EQ(testing::check_error([&] { p->eval_roofline(huge); }),
            "CubicFwdOp: roofline.flops: integer overflow in 'N * N * N' (17592186044416 * "
            "4194304)");
}

// Each tensor's bytes fit int64 (the call check sees to it); their sum over the effects may not.
TEST(Roofline, DerivedBytesThatOverflowAreACheckError) {
  constexpr std::string_view kCopy = R"yaml(
CopyFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim}
    inputs:
      x: {dtype: float16, shape: "[N]"}
    outputs:
      y: {dtype: float16, shape: "[N]"}
  workloads: [{label: w, N: 4}]
  roofline: {flops: "0"}
)yaml";
  auto p = plan_from(kCopy, "CopyFwdOp");
  auto state = p->construct({});
  // x read once and y written once, 2 bytes an element.
  EXPECT_EQ(p->eval_roofline(p->check(state, Inputs{meta({1 << 20})})).bytes, 2 * (2 << 20));
  // 2^61 float16 elements: 2^62 bytes read and 2^62 written.
  const SignatureCall huge = p->check(state, Inputs{meta({std::int64_t{1} << 61})});
  EXPECT_EQ(testing::check_error([&] { p->eval_roofline(huge); }),
            "CopyFwdOp: roofline.bytes: the bytes derived from the effects overflow int64 at y");
}

TEST(Roofline, ParamsReadByTheFormula) {
  auto p = builtin_plan("GeluFwdOp");
  auto tanh = p->construct({{"approximate", Value("tanh")}});
  auto erf = p->construct({});
  EXPECT_EQ(p->eval_roofline(p->check(tanh, Inputs{meta({10})})).flops, 90);
  EXPECT_EQ(p->eval_roofline(p->check(erf, Inputs{meta({10})})).flops, 50);
}

}  // namespace
}  // namespace tileops::manifest
