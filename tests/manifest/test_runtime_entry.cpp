// A new op defined only by manifest text loaded at run time gets its checks, output inference,
// effects and roofline with no code change.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"
#include "tileops/manifest/validator.hpp"

namespace tileops::manifest {
namespace {

using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::meta;

// A made-up op: a grouped projection y[b, g, n] over x[b, g * k] and w[g, k, n] with a bias.
constexpr const char* kRuntimeFamily = R"yaml(
GroupedProjFwdOp:
  family: runtime
  status: spec-only
  signature:
    forall: {B: Shape, K: Dim, N: Dim, T: "DType[bfloat16 | float32]"}
    params:
      groups: {type: int}
      out_dtype: {type: "float32 | bfloat16 | None", default: null, kw_only: true}
    inputs:
      x:    {dtype: T, shape: "[*B, groups * K]"}
      w:    {dtype: T, shape: "[groups, K, N]"}
      bias: {dtype: T, shape: "[groups, N]", optional: true}
    outputs:
      y: {dtype: "coalesce_dtype(out_dtype, T)", shape: "[*B, groups, N]", buffer: out}
    let:
      macs: "prod(B) * groups * K * N"
    shape_rules: ["groups > 0", "N % 8 == 0"]
  workloads:
    - {label: small, B: [4], K: 16, N: 32, groups: 2, some: [bias], dtype_cases: [{T: bfloat16}]}
    - {label: small-nobias, B: [4], K: 16, N: 32, groups: 2, out_dtype: float32, dtype_cases: [{T: float32}]}
  roofline:
    flops: "2 * macs + (prod(B) * groups * N if present(bias) else 0)"
)yaml";

class RuntimeEntry : public ::testing::Test {
 protected:
  Manifest manifest = Manifest::load_string("runtime.yaml", kRuntimeFamily);
  std::shared_ptr<const SignaturePlan> plan = SignaturePlan::build(manifest.entries().at(0));
};

TEST_F(RuntimeEntry, ValidatesCleanly) { EXPECT_TRUE(validate(manifest).empty()); }

TEST_F(RuntimeEntry, InfersTheOutputFromTheInputs) {
  auto state = plan->construct({{"groups", Value(2)}});
  SignatureCall call = plan->check(state, Inputs{meta({3, 5, 32}, DType::kBFloat16),
                                                 meta({2, 16, 8}, DType::kBFloat16), std::nullopt});
  EXPECT_EQ(call.index("K"), Value(16));
  EXPECT_EQ(call.index("N"), Value(8));
  EXPECT_EQ(call.index("macs"), Value(3 * 5 * 2 * 16 * 8));
  EXPECT_EQ(call.output(0).shape, (Shape{3, 5, 2, 8}));
  EXPECT_EQ(call.output(0).dtype, DType::kBFloat16);
}

TEST_F(RuntimeEntry, DTypeParamOverridesTheOutputDType) {
  auto state = plan->construct({{"groups", Value(2)}, {"out_dtype", Value(DType::kFloat32)}});
  SignatureCall call =
      plan->check(state, Inputs{cpu({1, 32}, DType::kBFloat16), cpu({2, 16, 8}, DType::kBFloat16),
                                cpu({2, 8}, DType::kBFloat16)});
  EXPECT_EQ(call.output(0).dtype, DType::kFloat32);
}

TEST_F(RuntimeEntry, ChecksItsShapesDTypesAndRules) {
  auto state = plan->construct({{"groups", Value(2)}});
  EXPECT_EQ(check_error([&] {
              plan->check(state, Inputs{cpu({1, 31}, DType::kBFloat16),
                                        cpu({2, 16, 8}, DType::kBFloat16), std::nullopt});
            }),
            "GroupedProjFwdOp: x shape does not match groups * K: axis 1 is 31, expected 32");
  EXPECT_EQ(check_error([&] {
              plan->check(state, Inputs{cpu({1, 32}, DType::kBFloat16),
                                        cpu({2, 16, 8}, DType::kFloat32), std::nullopt});
            }),
            "GroupedProjFwdOp: w dtype differs from T (bfloat16); got float32");
  EXPECT_EQ(check_error([&] {
              plan->check(state, Inputs{cpu({1, 32}, DType::kBFloat16),
                                        cpu({2, 16, 4}, DType::kBFloat16), std::nullopt});
            }),
            "GroupedProjFwdOp: shape_rules[1]: N % 8 == 0");
  EXPECT_EQ(check_error([&] {
              plan->construct({{"groups", Value(0)}});
            }),
            "GroupedProjFwdOp: shape_rules[0]: groups > 0");
}

TEST_F(RuntimeEntry, EffectsAndRoofline) {
  auto state = plan->construct({{"groups", Value(2)}});
  Tensor out = meta({4, 2, 8}, DType::kBFloat16);
  SignatureCall call =
      plan->check(state,
                  Inputs{meta({4, 32}, DType::kBFloat16), meta({2, 16, 8}, DType::kBFloat16),
                         meta({2, 8}, DType::kBFloat16)},
                  &out);
  EXPECT_EQ(plan->effect_branch(state, call.branch_key()).operator_name,
            "tileops::runtime_grouped_proj_fwd_out");
  RooflineResult r = plan->eval_roofline(call);
  EXPECT_EQ(r.flops, 2 * 4 * 2 * 16 * 8 + 4 * 2 * 8);
  EXPECT_EQ(r.bytes, (4 * 32 + 2 * 16 * 8 + 2 * 8 + 4 * 2 * 8) * 2);
}

}  // namespace
}  // namespace tileops::manifest
