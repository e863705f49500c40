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

}  // namespace
}  // namespace tileops::manifest
