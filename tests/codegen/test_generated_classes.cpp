// The classes tileops_opgen writes for tests/codegen/toyfam.yaml, a family with one entry per
// shape of class: every param kind and default, construction-time tensors, an op without tensor
// inputs, two outputs, no output, a composite. The build compiling them is half the test; here
// they are constructed and called, and what they hold is checked against the manifest.
#include <gtest/gtest.h>

#include <cmath>

#include "tileops/manifest/manifest.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/toyfam.hpp"

namespace tileops {

const manifest::Manifest& codegen_toy_manifest() {
  static const manifest::Manifest m = manifest::Manifest::load_file(TILEOPS_CODEGEN_TOYFAM);
  return m;
}

// The family has no kernels: each forward below computes on the CPU itself.
namespace kernels {
void toyfam_implementations(ImplementationTable&) {}
}  // namespace kernels

namespace {

float* floats(const Tensor& t) { return static_cast<float*>(t.data_ptr()); }

Tensor filled(std::int64_t n, float start) {
  Tensor t = Tensor::empty({n}, DType::kFloat32);
  for (std::int64_t i = 0; i < n; ++i) floats(t)[i] = start + static_cast<float>(i);
  return t;
}

}  // namespace

// y = x * scale + count.
CallResult EveryParamFwdOp::forward(const CallArgs& args) {
  Tensor y = allocate_output(args, 0);
  for (std::int64_t i = 0; i < y.numel(); ++i)
    floats(y)[i] =
        floats(args.input(0))[i] * static_cast<float>(scale()) + static_cast<float>(count());
  return {y};
}
KernelCalls EveryParamFwdOp::kernel_calls(const CallArgs&) const { return {}; }

// y = x * table [+ bias] [* gate].
CallResult TableFwdOp::forward(const CallArgs& args) {
  Tensor y = allocate_output(args, 0);
  const Tensor& table = *args.ctor_tensors[0];
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    float v = floats(args.input(0))[i] * floats(table)[i];
    if (args.ctor_tensors[1]) v += floats(*args.ctor_tensors[1])[i];
    if (args.has(1)) v *= floats(args.input(1))[i];
    floats(y)[i] = v;
  }
  return {y};
}
KernelCalls TableFwdOp::kernel_calls(const CallArgs&) const { return {}; }

// y = 0, 1, ..., length - 1.
CallResult RangeFwdOp::forward(const CallArgs& args) {
  Tensor y = allocate_output(args, 0);
  for (std::int64_t i = 0; i < y.numel(); ++i) floats(y)[i] = static_cast<float>(i);
  return {y};
}
KernelCalls RangeFwdOp::kernel_calls(const CallArgs&) const { return {}; }

// low = x[:N], high = x[N:].
CallResult SplitFwdOp::forward(const CallArgs& args) {
  Tensor low = allocate_output(args, 0), high = allocate_output(args, 1);
  const std::int64_t n = low.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    floats(low)[i] = floats(args.input(0))[i];
    floats(high)[i] = floats(args.input(0))[n + i];
  }
  return {low, high};
}
KernelCalls SplitFwdOp::kernel_calls(const CallArgs&) const { return {}; }

// x <- value.
CallResult FillFwdOp::forward(const CallArgs& args) {
  const Tensor& x = args.input(0);
  for (std::int64_t i = 0; i < x.numel(); ++i) floats(x)[i] = static_cast<float>(value());
  return {};
}
KernelCalls FillFwdOp::kernel_calls(const CallArgs&) const { return {}; }

// y = second(first(x)).
CallResult TwoStageFwdOp::forward(const CallArgs& args) { return {second_(first_(args.input(0)))}; }

namespace {

TEST(GeneratedClass, DefaultsOfEveryParamKindAreTheManifests) {
  EveryParamFwdOp op(3);
  EXPECT_EQ(op.count(), 3);
  EXPECT_EQ(op.scale(), 0.5);
  EXPECT_EQ(op.alpha(), Value(1));
  EXPECT_TRUE(op.alpha().is_int());
  EXPECT_TRUE(op.flag());
  EXPECT_EQ(op.label(), "a \"quoted\" label");
  EXPECT_EQ(op.mode(), "exact");
  EXPECT_EQ(op.dims(), (Shape{1, 2}));
  EXPECT_EQ(op.weights(), (std::vector<double>{0.25, 1.5}));
  EXPECT_EQ(op.acc_dtype(), DType::kFloat64);
  EXPECT_EQ(op.limit(), std::nullopt);
  EXPECT_EQ(op.maybe_dims(), std::nullopt);
  EXPECT_EQ(op.maybe_mode(), std::optional<std::string>("fast"));
  // The accessors and the checked ParamMap are one source.
  EXPECT_EQ(op.params().at("label"), Value("a \"quoted\" label"));
  EXPECT_EQ(op.params().at("acc_dtype"), Value(DType::kFloat64));
  EXPECT_TRUE(op.params().at("limit").is_none());
}

TEST(GeneratedClass, TypedArgumentsReachTheParamsInDeclarationOrder) {
  EveryParamFwdOp op(7, 1.25, Value(0.5), false, "l", "fast", Shape{4}, {2.0}, DType::kFloat32, 9,
                     Shape{0, 1}, std::nullopt);
  EXPECT_EQ(op.scale(), 1.25);
  EXPECT_TRUE(op.alpha().is_float());
  EXPECT_FALSE(op.flag());
  EXPECT_EQ(op.mode(), "fast");
  EXPECT_EQ(op.acc_dtype(), DType::kFloat32);
  EXPECT_EQ(op.limit(), std::optional<std::int64_t>(9));
  EXPECT_EQ(op.maybe_dims(), std::optional<Shape>(Shape({0, 1})));
  EXPECT_EQ(op.maybe_mode(), std::nullopt);
  std::vector<std::string> names;
  for (const auto& [name, value] : op.params()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"count", "scale", "alpha", "flag", "label", "mode",
                                             "dims", "weights", "acc_dtype", "limit", "maybe_dims",
                                             "maybe_mode"}));
}

TEST(GeneratedClass, TheByNameConstructorChecksAgainstTheManifest) {
  EveryParamFwdOp op(ParamMap{{"count", Value(2)}, {"mode", Value("fast")}}, std::nullopt);
  EXPECT_EQ(op.count(), 2);
  EXPECT_EQ(op.mode(), "fast");
  EXPECT_EQ(op.scale(), 0.5);
  try {
    EveryParamFwdOp bad(ParamMap{{"count", Value(2)}, {"mode", Value("slow")}}, std::nullopt);
    FAIL() << "an enum value outside the manifest's was accepted";
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("mode"), std::string::npos) << e.what();
  }
}

TEST(GeneratedClass, CallOperatorTakesTheInputsAndOut) {
  EveryParamFwdOp op(3, 2.0);
  Tensor y = op(filled(4, 1.0f));
  EXPECT_EQ(floats(y)[3], 4.0f * 2.0f + 3.0f);
  Tensor out = Tensor::empty({4}, DType::kFloat32);
  Tensor returned = op(filled(4, 0.0f), CallOptions{out});
  EXPECT_EQ(returned.data_ptr(), out.data_ptr());
  EXPECT_EQ(floats(out)[1], 1.0f * 2.0f + 3.0f);
}

TEST(GeneratedClass, ConstructionTimeTensorsTravelBesideTheParams) {
  TableFwdOp plain(filled(3, 1.0f));
  EXPECT_EQ(floats(plain(filled(3, 2.0f)))[2], 4.0f * 3.0f);
  TableFwdOp biased(filled(3, 1.0f), filled(3, 10.0f));
  Tensor y = biased(filled(3, 2.0f), filled(3, 1.0f));
  EXPECT_EQ(floats(y)[0], 2.0f * 1.0f + 10.0f);
  // By name, as make_op passes them.
  TableFwdOp by_name(ParamMap{{"table", Value(filled(3, 2.0f))}}, std::nullopt);
  EXPECT_EQ(floats(by_name(filled(3, 1.0f)))[1], 2.0f * 3.0f);
}

TEST(GeneratedClass, AnOpWithoutTensorInputsIsCalledWithOptionsOnly) {
  RangeFwdOp op(5, "cpu");
  EXPECT_EQ(op.device(), "cpu");
  Tensor y = op();
  ASSERT_EQ(y.shape(), Shape({5}));
  EXPECT_EQ(floats(y)[4], 4.0f);
}

TEST(GeneratedClass, TwoOutputsComeBackAsAResultStruct) {
  SplitFwdOp op;
  SplitFwdOp::Result r = op(filled(4, 0.0f));
  EXPECT_EQ(floats(r.low)[1], 1.0f);
  EXPECT_EQ(floats(r.high)[0], 2.0f);
}

TEST(GeneratedClass, NoOutputReturnsNothingAndWritesTheInput) {
  FillFwdOp op(7.0);
  Tensor x = filled(3, 0.0f);
  static_assert(std::is_void_v<decltype(op(x))>);
  op(x);
  EXPECT_EQ(floats(x)[2], 7.0f);
}

TEST(GeneratedClass, CompositeStagesAreHeldWithTheParamsTheyShareByName) {
  TwoStageFwdOp op(4, 3.0);
  const std::vector<std::shared_ptr<Op>> held = op.held_delegates();
  // `first` and `second` are held at construction; the optional `later` is not.
  ASSERT_EQ(held.size(), 2u);
  for (const auto& sub : held) {
    const auto& stage = static_cast<const EveryParamFwdOp&>(*sub);
    EXPECT_EQ(stage.count(), 4);    // the composite's count
    EXPECT_EQ(stage.scale(), 3.0);  // the composite's scale, not the stage's default 0.5
  }
  Tensor y = op(filled(2, 1.0f));
  EXPECT_EQ(floats(y)[0], (1.0f * 3.0f + 4.0f) * 3.0f + 4.0f);
  const auto record = op.last_call();
  ASSERT_EQ(record->stages().size(), 3u);
  EXPECT_EQ(record->stages()[0].first, "first");
  EXPECT_EQ(record->stages()[0].second.size(), 1u);
  EXPECT_EQ(record->stages()[2].first, "later");
  EXPECT_TRUE(record->stages()[2].second.empty());
}

}  // namespace
}  // namespace tileops
