// The result check (docs/framework.md): what forward returned against the record of the call.
#include <gtest/gtest.h>

#include "common/toy_entries.hpp"
#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::meta;
using testing::on_cuda;
using testing::plan_from;

const std::string kToy = R"yaml(
SplitFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[N]"}
    outputs:
      lo: {dtype: T, shape: "[N]", buffer: out}
      hi: {dtype: float32, shape: "[N]", contiguous: true}
  workloads: [{label: w, N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "N"}
)yaml" + test_common::toy_entry(test_common::kInplaceEntry, "InplaceFwdOp") +
                         test_common::toy_entry(test_common::kSinkEntry, "SinkFwdOp");

using Results = std::vector<std::optional<Tensor>>;

class ResultCheck : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> split = plan_from(kToy, "SplitFwdOp");
  ConstructionState split_state = split->construct({});
  Tensor x = cpu({4}, DType::kFloat32);
  Inputs inputs{x};
  SignatureCall call = split->check(split_state, inputs);

  std::string split_error(const Results& results, const Tensor* out = nullptr) {
    return check_error([&] { split->check_result(call, inputs, out, results); });
  }
};

TEST_F(ResultCheck, AcceptsFreshOutputsOfTheInferredShapeAndDType) {
  EXPECT_NO_THROW(split->check_result(
      call, inputs, nullptr, Results{cpu({4}, DType::kFloat32), cpu({4}, DType::kFloat32)}));
}

TEST_F(ResultCheck, WrongNumberOfOutputs) {
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32)}),
            "SplitFwdOp: forward returns 1 output; the signature declares 2");
}

TEST_F(ResultCheck, MissingOutput) {
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32), std::nullopt}),
            "SplitFwdOp: forward returns no tensor for output hi");
}

TEST_F(ResultCheck, WrongShape) {
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32), cpu({3}, DType::kFloat32)}),
            "SplitFwdOp: output hi has shape [3], expected [4]");
}

TEST_F(ResultCheck, WrongDType) {
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32), cpu({4}, DType::kFloat16)}),
            "SplitFwdOp: output hi has dtype float16, expected float32");
}

TEST_F(ResultCheck, WrongDevice) {
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32), on_cuda({4}, DType::kFloat32)}),
            "SplitFwdOp: output hi is on cuda:0, not on the call device cpu");
}

TEST_F(ResultCheck, DeclaredContiguousOutput) {
  Tensor strided = cpu({8}, DType::kFloat32).as_strided({4}, {2}, 0);
  EXPECT_EQ(split_error(Results{cpu({4}, DType::kFloat32), strided}),
            "SplitFwdOp: output hi must be contiguous");
}

TEST_F(ResultCheck, OutputSharingStorageWithAnInput) {
  EXPECT_EQ(split_error(Results{x, cpu({4}, DType::kFloat32)}),
            "SplitFwdOp: output lo shares storage with a tensor it does not declare as its alias "
            "(input x)");
}

TEST_F(ResultCheck, OutputSharingStorageWithAnEarlierOutput) {
  Tensor lo = cpu({4}, DType::kFloat32);
  EXPECT_EQ(split_error(Results{lo, lo}),
            "SplitFwdOp: output hi shares storage with a tensor it does not declare as its alias "
            "(output lo)");
}

TEST_F(ResultCheck, BufferedOutputMustBeTheOutTensor) {
  Tensor out = cpu({4}, DType::kFloat32);
  SignatureCall with_out = split->check(split_state, inputs, &out);
  EXPECT_NO_THROW(
      split->check_result(with_out, inputs, &out, Results{out, cpu({4}, DType::kFloat32)}));
  EXPECT_EQ(check_error([&] {
              split->check_result(with_out, inputs, &out,
                                  Results{cpu({4}, DType::kFloat32), cpu({4}, DType::kFloat32)});
            }),
            "SplitFwdOp: output lo is not the out tensor the call passed");
}

TEST_F(ResultCheck, FreshOutputMayNotShareStorageWithOut) {
  Tensor out = cpu({4}, DType::kFloat32);
  SignatureCall with_out = split->check(split_state, inputs, &out);
  EXPECT_EQ(check_error([&] {
              split->check_result(with_out, inputs, &out, Results{out, out});
            }),
            "SplitFwdOp: output hi shares storage with a tensor it does not declare as its alias "
            "(output lo)");
}

TEST_F(ResultCheck, MetaResultsOfAMetaCall) {
  Inputs meta_inputs{meta({4}, DType::kFloat32)};
  SignatureCall meta_call = split->check(split_state, meta_inputs);
  EXPECT_NO_THROW(
      split->check_result(meta_call, meta_inputs, nullptr,
                          Results{meta({4}, DType::kFloat32), meta({4}, DType::kFloat32)}));
  EXPECT_EQ(check_error([&] {
              split->check_result(meta_call, meta_inputs, nullptr,
                                  Results{meta({4}, DType::kFloat32), meta({5}, DType::kFloat32)});
            }),
            "SplitFwdOp: output hi has shape [5], expected [4]");
}

TEST(ResultCheckAlias, WrittenInputMustBeReturnedAsItsAlias) {
  auto p = plan_from(kToy, "InplaceFwdOp");
  ConstructionState state = p->construct({{"inplace", Value(true)}});
  Tensor x = cpu({4});
  Inputs inputs{x};
  SignatureCall call = p->check(state, inputs);
  EXPECT_NO_THROW(p->check_result(call, inputs, nullptr, Results{x}));
  EXPECT_EQ(check_error([&] { p->check_result(call, inputs, nullptr, Results{cpu({4})}); }),
            "InplaceFwdOp: output y is not input x, which it aliases");
}

TEST(ResultCheckAlias, UnwrittenAliasIsAFreshOutput) {
  auto p = plan_from(kToy, "InplaceFwdOp");
  ConstructionState state = p->construct({{"inplace", Value(false)}});
  Tensor x = cpu({4});
  Inputs inputs{x};
  SignatureCall call = p->check(state, inputs);
  EXPECT_NO_THROW(p->check_result(call, inputs, nullptr, Results{cpu({4})}));
  EXPECT_EQ(check_error([&] { p->check_result(call, inputs, nullptr, Results{x}); }),
            "InplaceFwdOp: output y shares storage with a tensor it does not declare as its alias "
            "(input x)");
}

TEST(ResultCheckNoOutputs, ReturnsNothing) {
  auto p = plan_from(kToy, "SinkFwdOp");
  ConstructionState state = p->construct({});
  Inputs inputs{cpu({4}, DType::kFloat32)};
  SignatureCall call = p->check(state, inputs);
  EXPECT_NO_THROW(p->check_result(call, inputs, nullptr, Results{}));
  EXPECT_EQ(check_error([&] {
              p->check_result(call, inputs, nullptr, Results{cpu({4}, DType::kFloat32)});
            }),
            "SinkFwdOp: forward returns 1 output; the signature declares 0");
}

}  // namespace
}  // namespace tileops::manifest
