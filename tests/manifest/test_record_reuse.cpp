// check_into refills a record in place (Note [Record reuse] in signature_call.hpp): a refilled
// record must equal a fresh check of the same call, whatever the record held before.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::builtin_plan;
using testing::check_error;
using testing::cpu;
using testing::Inputs;

// Everything a record answers, in one comparable value.
struct Snapshot {
  std::vector<std::pair<std::string, Value>> indices;
  std::vector<std::tuple<bool, Shape, DType>> tensors;
  std::optional<Device> device;
  bool has_out;
  bool empty_write;
  std::uint32_t branch_key;
  std::vector<std::string> written;
  std::size_t stages;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

Snapshot snapshot(const SignatureCall& c) {
  Snapshot s{c.indices(),    {},          c.device(),       c.has_out(), c.empty_write(),
             c.branch_key(), c.written(), c.stages().size()};
  for (const TensorRecord& t : c.tensors())
    s.tensors.emplace_back(t.present, t.present ? t.shape : Shape{}, t.dtype);
  return s;
}

class RecordReuse : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> plan = builtin_plan("RMSNormFwdOp");
  ConstructionState state = plan->construct({{"normalized_shape", Value(Shape{8})}});
  std::shared_ptr<SignatureCall> record = SignaturePlan::new_record();
};

TEST_F(RecordReuse, RefilledRecordEqualsAFreshCheck) {
  Tensor out = cpu({2, 3, 8}, DType::kBFloat16);
  const Inputs first{cpu({2, 3, 8}, DType::kBFloat16), cpu({8}, DType::kBFloat16)};
  plan->check_into(*record, state, first, &out);
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(state, first, &out)));
  // Another rank, another dtype, the optional input and out left out.
  const Inputs second{cpu({5, 8}, DType::kFloat32), std::nullopt};
  plan->check_into(*record, state, second);
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(state, second)));
  EXPECT_EQ(record->index("B"), Value(Shape{5}));
  EXPECT_FALSE(record->present("weight"));
  EXPECT_FALSE(record->has_out());
}

TEST_F(RecordReuse, RecordOfAnotherConstructionIsRefilledWhole) {
  const Inputs inputs8{cpu({2, 8}, DType::kFloat32), std::nullopt};
  plan->check_into(*record, state, inputs8);
  ConstructionState other =
      plan->construct({{"normalized_shape", Value(Shape{4, 2})}, {"eps", Value(0.5)}});
  ASSERT_NE(other.id, state.id);
  const Inputs inputs42{cpu({3, 4, 2}, DType::kFloat32), std::nullopt};
  plan->check_into(*record, other, inputs42);
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(other, inputs42)));
  EXPECT_EQ(record->index("normalized_shape"), Value(Shape{4, 2}));
  EXPECT_EQ(record->index("eps"), Value(0.5));
}

TEST_F(RecordReuse, FailedRefillLeavesARecordTheNextRefillRepairs) {
  const Inputs good{cpu({2, 8}, DType::kFloat16), cpu({8}, DType::kFloat16)};
  plan->check_into(*record, state, good);
  const Inputs bad{cpu({2, 8}, DType::kFloat16), cpu({8}, DType::kFloat32)};
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, bad); }),
            "RMSNormFwdOp: weight dtype differs from T (float16); got float32");
  const Inputs next{cpu({7, 8}, DType::kBFloat16), std::nullopt};
  plan->check_into(*record, state, next);
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(state, next)));
}

TEST_F(RecordReuse, RefillClearsTheStagesOfThePreviousCall) {
  const Inputs inputs{cpu({2, 8}, DType::kFloat32), std::nullopt};
  plan->check_into(*record, state, inputs);
  record->file_stages({{"norm", {std::make_shared<const SignatureCall>(*record)}}});
  plan->check_into(*record, state, inputs);
  EXPECT_TRUE(record->stages().empty());
}

// Repeated geometry (Note [Repeated geometry] in src/manifest/plan_check.cpp): a record solved
// for the same inputs' shapes and dtypes is not solved again, but everything that depends on the
// tensors themselves is checked on every call.
TEST_F(RecordReuse, RepeatedGeometryStillChecksTheTensorsThemselves) {
  const Tensor x = cpu({2, 3, 8}, DType::kBFloat16);
  const Inputs inputs{x, cpu({8}, DType::kBFloat16)};
  Tensor out = cpu({2, 3, 8}, DType::kBFloat16);
  plan->check_into(*record, state, inputs, &out);
  // out of the wrong shape, a strided out, out aliasing x: each is still refused.
  Tensor wrong = cpu({2, 3, 4}, DType::kBFloat16);
  EXPECT_EQ(
      check_error([&] { plan->check_into(*record, state, inputs, &wrong); }),
      "RMSNormFwdOp: out does not have the shape of output: got [2, 3, 4], expected [2, 3, 8]");
  Tensor wide = cpu({2, 3, 16}, DType::kBFloat16);
  Tensor strided = wide.as_strided({2, 3, 8}, {48, 16, 2}, 0);
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, inputs, &strided); }),
            "RMSNormFwdOp: out must be contiguous");
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, inputs, &x); }),
            "RMSNormFwdOp: out shares storage with input x");
  // The same geometry on another device: the record says where this call runs.
  const Inputs on_meta{Tensor::meta({2, 3, 8}, DType::kBFloat16),
                       Tensor::meta({8}, DType::kBFloat16)};
  plan->check_into(*record, state, on_meta);
  EXPECT_EQ(record->device(), Device::meta());
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(state, on_meta)));
  plan->check_into(*record, state, inputs, &out);
  EXPECT_EQ(record->device(), Device::cpu());
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(state, inputs, &out)));
}

TEST_F(RecordReuse, ACallThatFailedWhileSolvingFailsAgainWithTheSameGeometry) {
  // The failing check fills the record's input records before its rule fails; a second call of
  // the same geometry must solve again, not take the half-solved record for a solved one.
  const Inputs bad{cpu({2, 8}, DType::kFloat16), cpu({8}, DType::kFloat32)};
  const std::string error = check_error([&] { plan->check_into(*record, state, bad); });
  EXPECT_EQ(error, "RMSNormFwdOp: weight dtype differs from T (float16); got float32");
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, bad); }), error);
  const Inputs good{cpu({2, 8}, DType::kFloat16), cpu({8}, DType::kFloat16)};
  plan->check_into(*record, state, good);
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, bad); }), error);
  EXPECT_EQ(check_error([&] { plan->check_into(*record, state, bad); }), error);
}

TEST_F(RecordReuse, TheSameGeometryUnderAnotherConstructionIsSolvedAgain) {
  const Inputs inputs{cpu({2, 8}, DType::kFloat32), std::nullopt};
  plan->check_into(*record, state, inputs);
  const ConstructionState other =
      plan->construct({{"normalized_shape", Value(Shape{8})}, {"eps", Value(0.5)}});
  plan->check_into(*record, other, inputs);
  EXPECT_EQ(record->index("eps"), Value(0.5));
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(other, inputs)));
  // And an optional input given where the solved call left it out is another geometry.
  const Inputs with_weight{cpu({2, 8}, DType::kFloat32), cpu({8}, DType::kFloat32)};
  plan->check_into(*record, other, with_weight);
  EXPECT_TRUE(record->present("weight"));
  EXPECT_EQ(snapshot(*record), snapshot(plan->check(other, with_weight)));
}

// Memoised programs (Note [Memoised programs] in src/manifest/plan_exec.cpp): a record remembers
// each rule's, let's and output axis term's last evaluation by the values of the slots it read. A
// changed slot must evaluate again: a call that breaks a rule after passing calls of the same
// record still fails, and a record's outputs follow the inputs.
TEST(MemoisedPrograms, ARuleIsCheckedAgainWhenASlotItReadsChanges) {
  auto amax = builtin_plan("AmaxFwdOp");
  const ConstructionState state =
      amax->construct({{"dim", Value(Shape{-1})}, {"keepdim", Value(true)}});
  auto record = SignaturePlan::new_record();
  const Inputs good{cpu({2, 3}, DType::kFloat32)};
  amax->check_into(*record, state, good);
  EXPECT_EQ(record->output(0).shape, (Shape{2, 1}));
  const Inputs empty_axis{cpu({2, 0}, DType::kFloat32)};
  const std::string error = check_error([&] { amax->check_into(*record, state, empty_axis); });
  EXPECT_NE(error.find("AmaxFwdOp: shape_rules[2]"), std::string::npos) << error;
  EXPECT_NE(error.find("S[normalize_axis(a, len(S))] > 0"), std::string::npos) << error;
  // The same failure again, then a pass with new sizes whose output follows them.
  EXPECT_EQ(check_error([&] { amax->check_into(*record, state, empty_axis); }), error);
  const Inputs larger{cpu({4, 5, 6}, DType::kFloat32)};
  amax->check_into(*record, state, larger);
  EXPECT_EQ(record->output(0).shape, (Shape{4, 5, 1}));
  EXPECT_EQ(snapshot(*record), snapshot(amax->check(state, larger)));
}

TEST(MemoisedPrograms, ADTypeRuleIsCheckedForEachDType) {
  auto add = builtin_plan("AddFwdOp");
  const ConstructionState state = add->construct({{"alpha", Value(0.5)}});
  auto record = SignaturePlan::new_record();
  const Inputs floats{cpu({3}, DType::kFloat32), cpu({3}, DType::kFloat32)};
  const Inputs ints{cpu({3}, DType::kInt32), cpu({3}, DType::kInt32)};
  add->check_into(*record, state, floats);
  const std::string error = check_error([&] { add->check_into(*record, state, ints); });
  EXPECT_NE(error.find("AddFwdOp: shape_rules[0]"), std::string::npos) << error;
  EXPECT_NE(error.find("category(alpha)"), std::string::npos) << error;
  add->check_into(*record, state, floats);
  EXPECT_EQ(check_error([&] { add->check_into(*record, state, ints); }), error);
}

TEST(MemoisedPrograms, ARecordMovedToAnotherPlanForgetsTheOldPlansPrograms) {
  auto amax = builtin_plan("AmaxFwdOp");
  auto sum = builtin_plan("SumFwdOp");
  const ConstructionState amax_state = amax->construct({{"dim", Value(Shape{0})}});
  const ConstructionState sum_state = sum->construct({{"dim", Value(Shape{0})}});
  auto record = SignaturePlan::new_record();
  const Inputs x{cpu({0, 4}, DType::kFloat32)};
  // Sum reduces an empty axis to zeros; Amax has no identity and refuses the same input.
  sum->check_into(*record, sum_state, x);
  EXPECT_EQ(record->output(0).shape, (Shape{4}));
  const std::string error = check_error([&] { amax->check_into(*record, amax_state, x); });
  EXPECT_NE(error.find("AmaxFwdOp: shape_rules[2]"), std::string::npos) << error;
  sum->check_into(*record, sum_state, x);
  EXPECT_EQ(snapshot(*record), snapshot(sum->check(sum_state, x)));
}

}  // namespace
}  // namespace tileops::manifest
