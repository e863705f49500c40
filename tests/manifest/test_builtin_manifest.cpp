// The embedded manifest: it loads, validates cleanly, and every entry compiles into a plan whose
// workload rows pass their own call check.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"
#include "tileops/manifest/validator.hpp"
#include "tileops/manifest/workload.hpp"

namespace tileops::manifest {
namespace {

using testing::Inputs;

TEST(BuiltinManifest, ValidatesWithZeroDiagnostics) {
  std::vector<std::string> diags = validate_builtin();
  std::string all;
  for (const auto& d : diags) all += d + "\n";
  EXPECT_TRUE(diags.empty()) << all;
}

TEST(BuiltinManifest, LoadsOnceAndFindsEntriesByName) {
  const Manifest& m = Manifest::builtin();
  EXPECT_EQ(&m, &Manifest::builtin());
  EXPECT_EQ(m.at("RMSNormFwdOp").family, "norm");
  EXPECT_EQ(m.at("RopeFwdOp").file, "rope.yaml");
  EXPECT_EQ(m.find("NoSuchFwdOp"), nullptr);
  EXPECT_EQ(testing::manifest_error([&] { m.at("NoSuchFwdOp"); }),
            "NoSuchFwdOp: no manifest entry");
}

TEST(BuiltinManifest, EveryEntryNamesItsFamilyFile) {
  for (const auto& e : Manifest::builtin().entries())
    EXPECT_EQ(e->file, e->family + ".yaml") << e->name;
}

TEST(BuiltinManifest, EveryWorkloadCaseInstantiatesAndChecksOnMetaTensors) {
  for (const auto& e : Manifest::builtin().entries()) {
    auto plan = SignaturePlan::build(e);
    for (const WorkloadRow& row : e->workloads) {
      for (const WorkloadCase& c : instantiate_workload(*plan, row)) {
        Inputs inputs;
        for (const auto& spec : c.inputs)
          inputs.push_back(spec ? std::optional<Tensor>(Tensor::meta(spec->shape, spec->dtype))
                                : std::nullopt);
        SignatureCall call = plan->check(plan->construct(c.params), inputs);
        RooflineResult r = plan->eval_roofline(call);
        EXPECT_GT(r.flops, 0) << e->name << " " << c.id;
        EXPECT_GT(r.bytes, 0) << e->name << " " << c.id;
      }
    }
  }
}

TEST(BuiltinManifest, WorkloadCaseIdsJoinLabelAndDTypes) {
  auto plan = testing::builtin_plan("RopeFwdOp");
  auto cases = instantiate_workload(*plan, plan->entry().workloads[0]);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].id, "llama-8b-prefill-bfloat16-int64");
  EXPECT_EQ(cases[1].id, "llama-8b-prefill-float16-int32");
  ASSERT_TRUE(cases[0].inputs[1].has_value());
  EXPECT_EQ(cases[0].inputs[1]->shape, (Shape{2048, 32, 128}));
  EXPECT_EQ(cases[0].inputs[0]->dtype, DType::kInt64);
}

TEST(BuiltinManifest, DTypeParamJoinsTheCaseId) {
  auto plan = testing::builtin_plan("AlibiFwdOp");
  auto cases = instantiate_workload(*plan, plan->entry().workloads[0]);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].id, "mpt-7b-s2k-bfloat16");
}

TEST(BuiltinManifest, OpWithoutCallTensorsTakesItsDeviceParam) {
  auto plan = testing::builtin_plan("AlibiFwdOp");
  auto state = plan->construct(
      {{"num_heads", Value(4)}, {"seq_len", Value(16)}, {"device", Value("cuda:1")}});
  SignatureCall call = plan->check(state, Inputs{});
  EXPECT_EQ(call.device(), Device::cuda(1));
  EXPECT_EQ(call.output(0).shape, (Shape{4, 16, 16}));
  EXPECT_EQ(call.output(0).dtype, DType::kFloat32);
}

TEST(BuiltinManifest, CategoryOfTheAlphaParamFollowsItsValue) {
  auto plan = testing::builtin_plan("AddFwdOp");
  auto int_alpha = plan->construct({{"alpha", Value(2)}});
  EXPECT_NO_THROW(plan->check(
      int_alpha, Inputs{testing::meta({4}, DType::kInt32), testing::meta({4}, DType::kInt32)}));
  auto float_alpha = plan->construct({{"alpha", Value(0.5)}});
  EXPECT_EQ(testing::check_error([&] {
              plan->check(float_alpha, Inputs{testing::meta({4}, DType::kInt32),
                                              testing::meta({4}, DType::kInt32)});
            }),
            "AddFwdOp: shape_rules[0]: category(alpha) == 'int' or category(alpha) == category(T)");
}

TEST(BuiltinManifest, ConstructionRuleOfAnOpWithoutCallTensors) {
  auto plan = testing::builtin_plan("AlibiFwdOp");
  EXPECT_EQ(testing::check_error([&] {
              plan->construct(
                  {{"num_heads", Value(0)}, {"seq_len", Value(16)}, {"device", Value("cpu")}});
            }),
            "AlibiFwdOp: shape_rules[0]: num_heads > 0");
}

}  // namespace
}  // namespace tileops::manifest
