// Unification of call tensors with their declared shapes (docs/manifest.md §2): binds, affine
// solves, splices, equality across tensors, and the output shapes inferred from the solved indices.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::builtin_plan;
using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::meta;
using testing::plan_from;

constexpr const char* kToy = R"yaml(
GluFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {B: Shape, N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[*B, 2 * N]"}
    outputs:
      y: {dtype: T, shape: "[*B, N]"}
  workloads: [{label: w, B: [2], N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "prod(B) * N"}

PackedFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {K: Dim, M: Dim}
    inputs:
      head: {dtype: int32, shape: "[K]"}
      packed: {dtype: int32, shape: "[3 * M + K]"}
      tail: {dtype: int32, shape: "[M - 1 + 1]", optional: true}
    outputs:
      y: {dtype: int32, shape: "[M]"}
  workloads: [{label: w, K: 1, M: 2}]
  roofline: {flops: "M"}

SpliceFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {S: Shape, N: Dim}
    inputs:
      x: {dtype: float32, shape: "[*S]"}
      v: {dtype: float32, shape: "[*S, N]", optional: true}
    outputs:
      y: {dtype: float32, shape: "[*S]"}
  workloads: [{label: w, S: [2]}]
  roofline: {flops: "prod(S)"}

MatmulFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, K: Dim}
    inputs:
      a: {dtype: float32, shape: "[M, K]"}
      b: {dtype: float32, shape: "[K, N]"}
    outputs:
      c: {dtype: float32, shape: "[M, N]"}
  workloads: [{label: w, M: 2, N: 3, K: 4}]
  roofline: {flops: "2 * M * N * K"}

TrimFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim}
    params:
      cut: {type: int, default: 2}
    inputs:
      x: {dtype: float32, shape: "[N]"}
    outputs:
      y: {dtype: float32, shape: "[N - cut]"}
  workloads: [{label: w, N: 4}]
  roofline: {flops: "N"}
)yaml";

class Unification : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> plan(std::string_view op) { return plan_from(kToy, op); }
};

TEST_F(Unification, EvenAxisSolvesTheHalf) {
  auto p = plan("GluFwdOp");
  auto call = p->check(p->construct({}), Inputs{cpu({3, 8})});
  EXPECT_EQ(call.index("N"), Value(4));
  EXPECT_EQ(call.index("B"), Value(Shape{3}));
  EXPECT_EQ(call.output(0).shape, (Shape{3, 4}));
}

TEST_F(Unification, OddAxisForTwiceNIsAnError) {
  auto p = plan("GluFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({3, 7})});
            }),
            "GluFwdOp: x axis 1 is not 2 * N; got 7");
}

TEST_F(Unification, AffineTermSolvesWithAKnownOffset) {
  auto p = plan("PackedFwdOp");
  auto call = p->check(p->construct({}),
                       Inputs{cpu({2}, DType::kInt32), cpu({14}, DType::kInt32), std::nullopt});
  EXPECT_EQ(call.index("K"), Value(2));
  EXPECT_EQ(call.index("M"), Value(4));
  EXPECT_EQ(call.output(0).shape, (Shape{4}));
}

TEST_F(Unification, AffineTermRefusesAnInexactDivision) {
  auto p = plan("PackedFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(
      check_error([&] {
        p->check(state, Inputs{cpu({2}, DType::kInt32), cpu({13}, DType::kInt32), std::nullopt});
      }),
      "PackedFwdOp: packed axis 0 is not 3 * M + K; got 13");
}

TEST_F(Unification, AffineTermRefusesANegativeSolution) {
  auto p = plan("PackedFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(
      check_error([&] {
        p->check(state, Inputs{cpu({5}, DType::kInt32), cpu({2}, DType::kInt32), std::nullopt});
      }),
      "PackedFwdOp: packed axis 0 is not 3 * M + K; got 2");
}

TEST_F(Unification, TermOfSolvedNamesIsAnEqualityCheck) {
  auto p = plan("PackedFwdOp");
  auto state = p->construct({});
  EXPECT_NO_THROW(p->check(
      state, Inputs{cpu({2}, DType::kInt32), cpu({14}, DType::kInt32), cpu({4}, DType::kInt32)}));
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({2}, DType::kInt32), cpu({14}, DType::kInt32),
                                     cpu({5}, DType::kInt32)});
            }),
            "PackedFwdOp: tail shape does not match M - 1 + 1: axis 0 is 5, expected 4");
}

TEST_F(Unification, SpliceTakesEveryAxisFromRankZeroToFour) {
  auto p = plan("SpliceFwdOp");
  auto state = p->construct({});
  for (const Shape& s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 3, 4}, Shape{1, 2, 3, 4}}) {
    auto call = p->check(state, Inputs{cpu(s, DType::kFloat32), std::nullopt});
    EXPECT_EQ(call.index("S"), Value(s)) << s.str();
    EXPECT_EQ(call.output(0).shape, s) << s.str();
  }
}

TEST_F(Unification, SpliceBeforeAnAxisLeavesTheLastAxis) {
  auto p = plan("SpliceFwdOp");
  auto call = p->check(p->construct({}),
                       Inputs{cpu({2, 3}, DType::kFloat32), cpu({2, 3, 7}, DType::kFloat32)});
  EXPECT_EQ(call.index("N"), Value(7));
}

TEST_F(Unification, SolvedSpliceMustMatchInTheNextTensor) {
  auto p = plan("SpliceFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(
      check_error([&] {
        p->check(state, Inputs{cpu({2, 3}, DType::kFloat32), cpu({2, 4, 7}, DType::kFloat32)});
      }),
      "SpliceFwdOp: v shape does not match *S: axes 0..1 of [2, 4, 7] are [2, 4], expected [2, 3]");
}

TEST_F(Unification, RankTooSmallForTheFixedAxes) {
  auto p = plan("GluFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(check_error([&] { p->check(state, Inputs{cpu({})}); }),
            "GluFwdOp: x needs rank >= 1; got rank 0");
}

TEST_F(Unification, WrongRankWithoutASplice) {
  auto p = plan("MatmulFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(
      check_error([&] {
        p->check(state, Inputs{cpu({2, 4, 1}, DType::kFloat32), cpu({4, 3}, DType::kFloat32)});
      }),
      "MatmulFwdOp: a needs rank == 2; got rank 3");
}

TEST_F(Unification, SharedNameMeansEqualLengthsAcrossTensors) {
  auto p = plan("MatmulFwdOp");
  auto state = p->construct({});
  auto call = p->check(state, Inputs{cpu({2, 4}, DType::kFloat32), cpu({4, 3}, DType::kFloat32)});
  EXPECT_EQ(call.output(0).shape, (Shape{2, 3}));
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({2, 4}, DType::kFloat32), cpu({5, 3}, DType::kFloat32)});
            }),
            "MatmulFwdOp: b shape does not match K: axis 0 is 5, expected 4");
}

TEST_F(Unification, OutputAxisMayNotBeNegative) {
  auto p = plan("TrimFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(p->check(state, Inputs{cpu({2}, DType::kFloat32)}).output(0).shape, (Shape{0}));
  EXPECT_EQ(check_error([&] { p->check(state, Inputs{cpu({1}, DType::kFloat32)}); }),
            "TrimFwdOp: axis 0 of y, N - cut, is negative (-1)");
}

TEST(UnificationBuiltin, KnownSpliceFromAParamMustMatch) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{1024})}});
  EXPECT_EQ(
      check_error([&] {
        p->check(state, Inputs{cpu({2, 4096}), std::nullopt});
      }),
      "RMSNormFwdOp: x shape does not match *normalized_shape: axes 1..1 of [2, 4096] are [4096], "
      "expected [1024]");
}

TEST(UnificationBuiltin, KnownSpliceLongerThanTheTensor) {
  auto p = builtin_plan("RMSNormFwdOp");
  auto state = p->construct({{"normalized_shape", Value(Shape{4, 8})}});
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({8}), std::nullopt});
            }),
            "RMSNormFwdOp: x needs rank >= 2; got rank 1");
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({3, 4, 8}), cpu({2, 4, 8})});
            }),
            "RMSNormFwdOp: weight needs rank == 2; got rank 3");
}

TEST(UnificationBuiltin, BroadcastOutput) {
  auto p = builtin_plan("AddFwdOp");
  auto state = p->construct({});
  auto call = p->check(state, Inputs{cpu({2, 1, 4}), cpu({3, 1})});
  EXPECT_EQ(call.output(0).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(p->check(state, Inputs{cpu({}), cpu({5})}).output(0).shape, (Shape{5}));
}

TEST(UnificationBuiltin, ShapesThatDoNotBroadcast) {
  auto p = builtin_plan("AddFwdOp");
  auto state = p->construct({});
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{cpu({2, 3}), cpu({4})});
            }),
            "AddFwdOp: output.shape: shapes [2, 3] and [4] do not broadcast in 'broadcast(A, B)'");
}

struct ReducedCase {
  const char* name;
  Value dim;
  bool keepdim;
  Shape want;
};

class ReducedOutput : public ::testing::TestWithParam<ReducedCase> {};

TEST_P(ReducedOutput, ShapeFollowsDimAndKeepdim) {
  auto p = builtin_plan("SumFwdOp");
  const ReducedCase& c = GetParam();
  auto state = p->construct({{"dim", c.dim}, {"keepdim", Value(c.keepdim)}});
  auto call = p->check(state, Inputs{meta({2, 3, 4})});
  EXPECT_EQ(call.output(0).shape, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    SumFwdOp, ReducedOutput,
    ::testing::Values(ReducedCase{"all_axes", Value(), false, Shape{}},
                      ReducedCase{"all_axes_keepdim", Value(), true, Shape{1, 1, 1}},
                      ReducedCase{"last", Value(Shape{-1}), false, Shape{2, 3}},
                      ReducedCase{"last_keepdim", Value(Shape{-1}), true, Shape{2, 3, 1}},
                      ReducedCase{"first_and_last", Value(Shape{0, -1}), false, Shape{3}},
                      ReducedCase{"middle_keepdim", Value(Shape{1}), true, Shape{2, 1, 4}},
                      ReducedCase{"empty_list_is_every_axis", Value(Shape{}), false, Shape{}}),
    [](const ::testing::TestParamInfo<ReducedCase>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(UnificationBuiltin, ReducedDimOutOfRangeFailsItsRule) {
  auto p = builtin_plan("SumFwdOp");
  auto state = p->construct({{"dim", Value(Shape{3})}});
  EXPECT_EQ(check_error([&] {
              p->check(state, Inputs{meta({2, 3, 4})});
            }),
            "SumFwdOp: shape_rules[0]: not present(dim) or (valid_axes(dim.value, len(S)) and "
            "unique_axes(dim.value, len(S)))");
}

}  // namespace
}  // namespace tileops::manifest
