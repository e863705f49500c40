// The record of a checked call (docs/seeds.md, class-structure Table 1, row 2): solved indices,
// tensor records, presence, traffic by the effects and the branch key.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::builtin_plan;
using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::plan_from;

class RmsNormCall : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> plan = builtin_plan("RMSNormFwdOp");
  ConstructionState state = plan->construct({{"normalized_shape", Value(Shape{8})}});
  Tensor out = cpu({2, 3, 8}, DType::kBFloat16);
  SignatureCall with_weight = plan->check(
      state, Inputs{cpu({2, 3, 8}, DType::kBFloat16), cpu({8}, DType::kBFloat16)}, &out);
  SignatureCall without_weight =
      plan->check(state, Inputs{cpu({2, 3, 8}, DType::kBFloat16), std::nullopt});
};

TEST_F(RmsNormCall, IndexReturnsSolvedIndicesAndIndexParams) {
  EXPECT_EQ(with_weight.index("B"), Value(Shape{2, 3}));
  EXPECT_EQ(with_weight.index("T"), Value(DType::kBFloat16));
  EXPECT_EQ(with_weight.index("normalized_shape"), Value(Shape{8}));
}

TEST_F(RmsNormCall, IndexOfAnUnknownNameOrATensor) {
  EXPECT_EQ(check_error([&] { with_weight.index("M"); }),
            "RMSNormFwdOp: 'M' is not an index solved by this call");
  EXPECT_EQ(check_error([&] { with_weight.index("x"); }),
            "RMSNormFwdOp: 'x' is not an index solved by this call");
}

TEST_F(RmsNormCall, IndicesListsEverySolvedNameInDeclarationOrder) {
  std::vector<std::string> names;
  for (const auto& [name, value] : without_weight.indices()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"B", "T", "normalized_shape"}));
}

TEST_F(RmsNormCall, PresenceOfInputsAndOut) {
  EXPECT_TRUE(with_weight.present("x"));
  EXPECT_TRUE(with_weight.present("weight"));
  EXPECT_TRUE(with_weight.present("out"));
  EXPECT_FALSE(without_weight.present("weight"));
  EXPECT_FALSE(without_weight.present("out"));
  EXPECT_EQ(check_error([&] { with_weight.present("bias"); }),
            "RMSNormFwdOp: 'bias' is not a tensor of the signature");
}

TEST_F(RmsNormCall, TensorRecordsHoldInputsAndInferredOutputs) {
  EXPECT_EQ(with_weight.tensor("weight").shape, (Shape{8}));
  EXPECT_EQ(with_weight.tensor("output").shape, (Shape{2, 3, 8}));
  EXPECT_EQ(with_weight.tensor("output").dtype, DType::kBFloat16);
  EXPECT_FALSE(without_weight.tensor("weight").present);
  EXPECT_EQ(with_weight.tensors().size(), 3u);
}

TEST_F(RmsNormCall, BytesOfPresentTensors) {
  EXPECT_EQ(with_weight.bytes("x"), 2 * 3 * 8 * 2);
  EXPECT_EQ(with_weight.bytes("weight"), 16);
  EXPECT_EQ(check_error([&] { without_weight.bytes("weight"); }),
            "RMSNormFwdOp: 'weight' is absent in this call");
}

TEST_F(RmsNormCall, TrafficReadsInputsAndWritesTheOutput) {
  std::vector<std::tuple<std::string, int, int>> traffic;
  for (const Traffic& t : with_weight.traffic())
    traffic.emplace_back(std::string(t.name), t.reads, t.writes);
  EXPECT_EQ(traffic, (std::vector<std::tuple<std::string, int, int>>{
                         {"x", 1, 0}, {"weight", 1, 0}, {"output", 0, 1}}));
  EXPECT_EQ(with_weight.derived_bytes(), 96 + 16 + 96);
  EXPECT_EQ(without_weight.derived_bytes(), 96 + 96);
}

TEST_F(RmsNormCall, NothingWrittenAndOutRecorded) {
  EXPECT_TRUE(with_weight.written().empty());
  EXPECT_TRUE(with_weight.has_out());
  EXPECT_FALSE(without_weight.has_out());
}

TEST_F(RmsNormCall, BranchKeyHasABitPerOptionalInputThenOut) {
  EXPECT_EQ(with_weight.branch_key(), 0b11u);
  EXPECT_EQ(without_weight.branch_key(), 0b00u);
  EXPECT_EQ(plan->presence_of(Inputs{cpu({8}), cpu({8})}, true), with_weight.branch_key());
}

TEST(SignatureCallEffects, MutatedInputIsWrittenAndTrafficCountsItTwice) {
  auto p = builtin_plan("FusedAddRMSNormFwdOp");
  auto state = p->construct({});
  auto call = p->check(state, Inputs{cpu({4, 8}), cpu({4, 8}), cpu({8})});
  EXPECT_EQ(call.written(), (std::vector<std::string>{"residual"}));
  EXPECT_TRUE(call.writes_input(1));
  EXPECT_FALSE(call.writes_input(0));
  // x and weight read, residual read and written, output written.
  EXPECT_EQ(call.derived_bytes(), 64 + 16 + 2 * 64 + 64);
}

constexpr const char* kToy = R"yaml(
FillFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim}
    inputs:
      src: {dtype: float32, shape: "[N]"}
      dst: {dtype: float32, shape: "[N]", mutated: true, write_only: true}
    outputs:
      result: {dtype: float32, shape: "[N]", alias: dst}
  workloads: [{label: w, N: 4}]
  roofline: {flops: "0"}
)yaml";

TEST(SignatureCallEffects, WriteOnlyInputIsWrittenOnceAndItsAliasIsNotCounted) {
  auto p = plan_from(kToy, "FillFwdOp");
  auto call =
      p->check(p->construct({}), Inputs{cpu({4}, DType::kFloat32), cpu({4}, DType::kFloat32)});
  std::vector<std::tuple<std::string, int, int>> traffic;
  for (const Traffic& t : call.traffic())
    traffic.emplace_back(std::string(t.name), t.reads, t.writes);
  EXPECT_EQ(traffic,
            (std::vector<std::tuple<std::string, int, int>>{{"src", 1, 0}, {"dst", 0, 1}}));
  EXPECT_EQ(call.derived_bytes(), 32);
}

TEST(SignatureCallStages, FileStagesFillsTheRecord) {
  auto p = builtin_plan("SiluFwdOp");
  auto call = p->check(p->construct({}), Inputs{cpu({4})});
  auto sub = std::make_shared<const SignatureCall>(call);
  call.file_stages({{"act", {sub}}});
  ASSERT_EQ(call.stages().size(), 1u);
  EXPECT_EQ(call.stages()[0].first, "act");
  EXPECT_TRUE(sub->stages().empty());
  EXPECT_EQ(call.index("S"), Value(Shape{4}));
}

}  // namespace
}  // namespace tileops::manifest
