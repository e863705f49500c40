// The call check (docs/framework.md): every check, in order, with the full text of its CheckError.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::meta;
using testing::on_cuda;
using testing::plan_from;

constexpr const char* kToy = R"yaml(
ScaleFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {S: Shape, N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x:       {dtype: T, shape: "[*S, N]", contiguous: true}
      scale:   {dtype: T, shape: "[N]", optional: true}
      lengths: {dtype: int64, shape: "[N]", device: cpu, optional: true}
    outputs:
      y: {dtype: T, shape: "[*S, N]", buffer: out}
    shape_rules: ["N > 0", "N % 2 == 0"]
  workloads: [{label: w, S: [2], N: 4, some: [scale], dtype_cases: [{T: float16}]}]
  roofline: {flops: "prod(S) * N"}

MixFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]", W: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[N]"}
      w: {dtype: W, shape: "[N]"}
    outputs:
      y: {dtype: T, shape: "[N]"}
    dtype_combos:
      - {T: float16, W: float16}
      - {T: float32, W: float16}
      - {T: float32, W: float32}
  workloads: [{label: w, N: 4, dtype_cases: [{T: float16, W: float16}]}]
  roofline: {flops: "N"}

AccumFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x:   {dtype: T, shape: "[N]"}
      acc: {dtype: T, shape: "[N]", mutated: true}
    outputs:
      y: {dtype: T, shape: "[N]", alias: acc}
  workloads: [{label: w, N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "N"}

GridAccumFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x:   {dtype: T, shape: "[M, N]"}
      acc: {dtype: T, shape: "[M, N]", mutated: true}
    outputs:
      y: {dtype: T, shape: "[M, N]", alias: acc}
  workloads: [{label: w, M: 2, N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "M * N"}
)yaml";

Tensor non_contiguous(Shape shape, DType dtype = DType::kFloat16) {
  // Every other row of a tensor twice as tall.
  Shape base_shape = shape;
  base_shape[0] *= 2;
  Tensor base = cpu(base_shape, dtype);
  Shape strides = base.strides();
  strides[0] *= 2;
  return base.as_strided(shape, strides, 0);
}

// A view of `shape` with `strides` over a CPU buffer just large enough for it.
Tensor strided(Shape shape, Shape strides, DType dtype = DType::kFloat16) {
  Tensor base = cpu({*strided_extent(shape, strides)}, dtype);
  return base.as_strided(shape, strides, 0);
}

// Every element of a view of `shape` is one element: stride 0 on every axis.
Tensor expanded(Shape shape, DType dtype = DType::kFloat16) {
  return strided(shape, Shape::filled(shape.size(), 0), dtype);
}

Tensor read_only(Shape shape, DType dtype = DType::kFloat16) {
  Tensor t = cpu(shape, dtype);
  return Tensor::from_blob(t.data_ptr(), t.shape(), t.strides(), dtype, Device::cpu(), t.storage(),
                           true);
}

class CallCheck : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> scale = plan_from(kToy, "ScaleFwdOp");
  ConstructionState scale_state = scale->construct({});
  std::shared_ptr<const SignaturePlan> mix = plan_from(kToy, "MixFwdOp");
  ConstructionState mix_state = mix->construct({});
  std::shared_ptr<const SignaturePlan> accum = plan_from(kToy, "AccumFwdOp");
  ConstructionState accum_state = accum->construct({});

  std::string scale_error(Inputs inputs, const Tensor* out = nullptr) {
    return check_error([&] { scale->check(scale_state, inputs, out); });
  }
};

TEST_F(CallCheck, AcceptsAWellFormedCall) {
  auto call = scale->check(scale_state, Inputs{cpu({3, 4}), cpu({4}), cpu({4}, DType::kInt64)});
  EXPECT_EQ(call.output(0).shape, (Shape{3, 4}));
  EXPECT_EQ(call.output(0).dtype, DType::kFloat16);
  EXPECT_EQ(call.device(), Device::cpu());
}

TEST_F(CallCheck, WrongInputCount) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4})}), "ScaleFwdOp: takes 3 inputs, got 1");
}

TEST_F(CallCheck, RequiredInputMissing) {
  EXPECT_EQ(scale_error(Inputs{std::nullopt, cpu({4}), std::nullopt}),
            "ScaleFwdOp: 'x' is required");
}

TEST_F(CallCheck, UndefinedTensorCountsAsMissing) {
  EXPECT_EQ(scale_error(Inputs{Tensor(), std::nullopt, std::nullopt}),
            "ScaleFwdOp: 'x' is required");
}

TEST_F(CallCheck, DTypeOutsideTheIndexSet) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}, DType::kInt32), std::nullopt, std::nullopt}),
            "ScaleFwdOp: x dtype is outside [float16, float32]; got int32");
}

TEST_F(CallCheck, DTypeDiffersFromTheSharedIndex) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), cpu({4}, DType::kFloat32), std::nullopt}),
            "ScaleFwdOp: scale dtype differs from T (float16); got float32");
}

TEST_F(CallCheck, DTypeIsNotTheDeclaredName) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, cpu({4}, DType::kInt32)}),
            "ScaleFwdOp: lengths dtype is not int64; got int32");
}

TEST_F(CallCheck, DTypeAssignmentOutsideTheCombos) {
  EXPECT_NO_THROW(
      mix->check(mix_state, Inputs{cpu({4}, DType::kFloat32), cpu({4}, DType::kFloat16)}));
  EXPECT_EQ(check_error([&] {
              mix->check(mix_state, Inputs{cpu({4}), cpu({4}, DType::kFloat32)});
            }),
            "MixFwdOp: [T, W] = [float16, float32] is not a dtype_combos row");
}

TEST_F(CallCheck, TensorsOnTwoDevices) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), on_cuda({4}), std::nullopt}),
            "ScaleFwdOp: needs every tensor on one device; got [x on cpu, scale on cuda:0]");
}

TEST_F(CallCheck, CpuTensorElsewhere) {
  EXPECT_EQ(scale_error(Inputs{on_cuda({3, 4}), std::nullopt, on_cuda({4}, DType::kInt64)}),
            "ScaleFwdOp: lengths declares `device: cpu` but is on cuda:0");
}

TEST_F(CallCheck, CpuTensorDoesNotDecideTheCallDevice) {
  auto call =
      scale->check(scale_state, Inputs{on_cuda({3, 4}), on_cuda({4}), cpu({4}, DType::kInt64)});
  EXPECT_EQ(call.device(), Device::cuda(0));
}

TEST_F(CallCheck, ContiguousInput) {
  EXPECT_EQ(scale_error(Inputs{non_contiguous({3, 4}), std::nullopt, std::nullopt}),
            "ScaleFwdOp: x must be contiguous");
}

TEST_F(CallCheck, InputWithoutContiguousMayHaveAnyStrides) {
  EXPECT_NO_THROW(
      scale->check(scale_state, Inputs{cpu({3, 4}), non_contiguous({4}), std::nullopt}));
}

TEST_F(CallCheck, ShapeRuleDecidedPerCall) {
  EXPECT_EQ(scale_error(Inputs{cpu({3, 5}), std::nullopt, std::nullopt}),
            "ScaleFwdOp: shape_rules[1]: N % 2 == 0");
  EXPECT_EQ(scale_error(Inputs{cpu({3, 0}), std::nullopt, std::nullopt}),
            "ScaleFwdOp: shape_rules[0]: N > 0");
}

TEST_F(CallCheck, OutWithTheWrongShape) {
  Tensor out = cpu({3, 2});
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            "ScaleFwdOp: out does not have the shape of y: got [3, 2], expected [3, 4]");
}

TEST_F(CallCheck, OutWithTheWrongDType) {
  Tensor out = cpu({3, 4}, DType::kFloat32);
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            "ScaleFwdOp: out dtype is not the dtype of y: got float32, expected float16");
}

TEST_F(CallCheck, OutOnAnotherDevice) {
  Tensor out = on_cuda({3, 4});
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            "ScaleFwdOp: out is not on the call device cpu: got cuda:0");
}

TEST_F(CallCheck, OutMustBeContiguous) {
  Tensor out = non_contiguous({3, 4});
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            "ScaleFwdOp: out must be contiguous");
}

TEST_F(CallCheck, OutMayNotBeReadOnly) {
  Tensor out = read_only({3, 4});
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            "ScaleFwdOp: out is read-only");
}

TEST_F(CallCheck, OutSharingStorageWithAnInput) {
  Tensor x = cpu({3, 4});
  EXPECT_EQ(scale_error(Inputs{x, std::nullopt, std::nullopt}, &x),
            "ScaleFwdOp: out shares storage with input x");
}

TEST_F(CallCheck, OutForAnOpWithoutABuffer) {
  Tensor out = cpu({4});
  EXPECT_EQ(check_error([&] {
              mix->check(mix_state, Inputs{cpu({4}), cpu({4})}, &out);
            }),
            "MixFwdOp: takes no out buffer");
}

TEST_F(CallCheck, WrittenInputMayNotBeReadOnly) {
  EXPECT_EQ(check_error([&] {
              accum->check(accum_state, Inputs{cpu({4}), read_only({4})});
            }),
            "AccumFwdOp: acc is written but read-only");
}

TEST_F(CallCheck, ReadOnlyInputThatIsOnlyReadIsFine) {
  EXPECT_NO_THROW(accum->check(accum_state, Inputs{read_only({4}), cpu({4})}));
}

TEST_F(CallCheck, WrittenInputSharingStorageWithAnotherInput) {
  Tensor t = cpu({4});
  EXPECT_EQ(check_error([&] {
              accum->check(accum_state, Inputs{t, t});
            }),
            "AccumFwdOp: acc is written and shares storage with input x");
}

// See Note [Internal overlap]: PyTorch's check (at::assert_no_internal_overlap) and wording.
constexpr const char* kOverlapRule =
    ": unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location; pass a copy (Tensor::contiguous())";

TEST_F(CallCheck, WrittenInputThatOverlapsItselfIsRefused) {
  auto grid = plan_from(kToy, "GridAccumFwdOp");
  auto grid_state = grid->construct({});
  auto grid_error = [&](const Tensor& acc) {
    return check_error([&] { grid->check(grid_state, Inputs{cpu({3, 3}), acc}); });
  };
  const std::string refused = std::string("GridAccumFwdOp: acc") + kOverlapRule;
  EXPECT_EQ(check_error([&] {
              accum->check(accum_state, Inputs{cpu({4}), expanded({4})});
            }),
            std::string("AccumFwdOp: acc") + kOverlapRule);
  EXPECT_EQ(grid_error(expanded({3, 3})), refused);
  EXPECT_EQ(grid_error(strided({3, 3}, {0, 1})), refused);  // a row broadcast
  EXPECT_EQ(grid_error(strided({3, 3}, {1, 1})), refused);  // 9 elements over 5 locations
  EXPECT_EQ(grid_error(strided({3, 3}, {2, 1})), refused);  // (0, 2) and (1, 0) meet
  // 12 elements over 13 locations, yet (0, 3) and (2, 0) meet.
  EXPECT_EQ(check_error([&] {
              grid->check(grid_state, Inputs{cpu({3, 4}), strided({3, 4}, {3, 2})});
            }),
            refused);
  EXPECT_EQ(
      check_error([&] {
        grid->check(grid_state, Inputs{meta({3, 3}), meta({3, 3}).as_strided({3, 3}, {0, 1}, 0)});
      }),
      refused);
  // Views whose elements are distinct are written as they are, however they are laid out.
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{cpu({3, 3}), strided({3, 3}, {1, 3})}));
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{cpu({3, 3}), strided({3, 3}, {5, 1})}));
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{cpu({3, 2}), strided({3, 2}, {2, 3})}));
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{cpu({1, 3}), strided({1, 3}, {0, 1})}));
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{cpu({0, 3}), strided({0, 3}, {0, 0})}));
  // Only written tensors: a read input may repeat its elements.
  EXPECT_NO_THROW(grid->check(grid_state, Inputs{expanded({3, 3}), cpu({3, 3})}));
}

TEST_F(CallCheck, OutThatOverlapsItselfIsRefused) {
  Tensor out = expanded({3, 4});
  EXPECT_EQ(scale_error(Inputs{cpu({3, 4}), std::nullopt, std::nullopt}, &out),
            std::string("ScaleFwdOp: out") + kOverlapRule);
}

// See Note [Sizes that overflow]: the check refuses a tensor whose element or byte count int64 does
// not hold, naming it, before step 3 could take a wrapped count for an empty write.
TEST(CallCheckSizes, BroadcastWhoseElementCountOverflowsNamesTheOutput) {
  auto add = testing::builtin_plan("AddFwdOp");
  auto state = add->construct({});
  const std::int64_t big = std::int64_t{1} << 32;  // big * big wraps to exactly 0
  const std::string refused =
      "AddFwdOp: output output has shape [4294967296, 4294967296], whose element count overflows "
      "int64";
  EXPECT_EQ(check_error([&] {
              add->check(state, Inputs{meta({big, 1}), meta({1, big})});
            }),
            refused);
  EXPECT_EQ(check_error([&] {
              add->check(state, Inputs{expanded({big, 1}), expanded({1, big})});
            }),
            refused);
}

TEST(CallCheckSizes, ParamShapedOutputThatOverflowsNamesTheOutput) {
  auto alibi = testing::builtin_plan("AlibiFwdOp");
  auto check_alibi = [&](std::int64_t heads, std::int64_t seq_len) {
    auto state = alibi->construct(
        {{"num_heads", Value(heads)}, {"seq_len", Value(seq_len)}, {"device", Value("meta")}});
    return check_error([&] { alibi->check(state, Inputs{}); });
  };
  const std::int64_t s = std::int64_t{1} << 31;
  EXPECT_EQ(check_alibi(3, s),  // wraps to a negative count
            "AlibiFwdOp: output output has shape [3, 2147483648, 2147483648], whose element "
            "count overflows int64");
  EXPECT_EQ(check_alibi(4, s),  // wraps to 0
            "AlibiFwdOp: output output has shape [4, 2147483648, 2147483648], whose element "
            "count overflows int64");
  EXPECT_EQ(check_alibi(1, s),  // 2^62 elements fit, their 2^64 bytes do not
            "AlibiFwdOp: output output of shape [1, 2147483648, 2147483648] and dtype float32 "
            "holds more bytes than int64 can count");
}

TEST_F(CallCheck, InputWhoseBytesOverflowIsNamed) {
  const std::int64_t n = std::int64_t{1} << 62;  // 2^62 float16 elements are 2^63 bytes
  EXPECT_EQ(check_error([&] {
              mix->check(mix_state, Inputs{expanded({n}), expanded({n / 2})});
            }),
            "MixFwdOp: x of shape [4611686018427387904] and dtype float16 holds more bytes than "
            "int64 can count");
}

TEST_F(CallCheck, MetaTensorsGoThroughTheSameCheck) {
  auto call = scale->check(scale_state, Inputs{meta({2, 3, 4}), meta({4}), std::nullopt});
  EXPECT_EQ(call.device(), Device::meta());
  EXPECT_EQ(call.output(0).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(call.output(0).dtype, DType::kFloat16);
  EXPECT_EQ(check_error([&] {
              scale->check(scale_state, Inputs{meta({2, 3, 4}), meta({5}), std::nullopt});
            }),
            "ScaleFwdOp: scale shape does not match N: axis 0 is 5, expected 4");
  EXPECT_EQ(check_error([&] {
              scale->check(scale_state,
                           Inputs{meta({2, 3}, DType::kBFloat16), std::nullopt, std::nullopt});
            }),
            "ScaleFwdOp: x dtype is outside [float16, float32]; got bfloat16");
}

TEST_F(CallCheck, MetaOutIsCheckedLikeAnyOut) {
  Tensor out = meta({2, 4});
  auto call = scale->check(scale_state, Inputs{meta({2, 4}), std::nullopt, std::nullopt}, &out);
  EXPECT_TRUE(call.has_out());
}

}  // namespace
}  // namespace tileops::manifest
