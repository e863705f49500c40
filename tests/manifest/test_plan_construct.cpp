// The construction check (docs/seeds.md, construction-and-calls Table 1, step 2): params against
// their declared types, defaults, construction-time tensors and the rules decidable without call
// tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "manifest/plan_internal.hpp"
#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::check_error;
using testing::cpu;
using testing::Inputs;
using testing::plan_from;

constexpr const char* kToy = R"yaml(
ConfFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    params:
      width: {type: int}
      name:  {type: str, default: a}
      mode:  {type: "'neox' | 'gptj'", default: neox}
      scale: {type: float, default: 1.0}
      flag:  {type: bool, default: false}
      dims:  {type: "list[int] | None", default: null}
    inputs:
      x: {dtype: T, shape: "[N, width]"}
    outputs:
      y: {dtype: T, shape: "[N, width]"}
    shape_rules: ["width % 4 == 0", "N > 0"]
  workloads: [{label: w, width: 4, N: 2, dtype_cases: [{T: float16}]}]
  roofline: {flops: "N * width"}

TableFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {K: Dim, N: Dim}
    params:
      table: {dtype: float32, shape: "[K]"}
    inputs:
      idx: {dtype: int64, shape: "[N]"}
    outputs:
      y: {dtype: float32, shape: "[N, K]"}
    shape_rules: ["K > 1"]
  workloads: [{label: w, N: 2}]
  roofline: {flops: "N * K"}

FillFwdOp:
  family: toy
  status: spec-only
  signature:
    params:
      n: {type: int}
      device: {type: str, kw_only: true}
    inputs: {}
    outputs:
      y: {dtype: float32, shape: "[n]"}
  workloads: [{label: w, n: 4, device: cpu}]
  roofline: {flops: "n"}
)yaml";

class Construction : public ::testing::Test {
 protected:
  std::shared_ptr<const SignaturePlan> conf = plan_from(kToy, "ConfFwdOp");

  std::string conf_error(const ParamMap& params) {
    return check_error([&] { conf->construct(params); });
  }
  Value param(const ConstructionState& state, std::string_view name) {
    return state.frame[conf->data().scope.find(name)->slot];
  }
};

TEST_F(Construction, NeedsNoTensors) {
  ConstructionState state = conf->construct({{"width", Value(8)}});
  EXPECT_EQ(param(state, "width"), Value(8));
  EXPECT_TRUE(state.ctor_tensors.empty());
  ASSERT_NE(state.point, nullptr);
}

TEST_F(Construction, DefaultsFillTheOmittedParams) {
  ConstructionState state = conf->construct({{"width", Value(8)}});
  EXPECT_EQ(param(state, "name"), Value("a"));
  EXPECT_EQ(param(state, "mode"), Value("neox"));
  EXPECT_EQ(param(state, "scale"), Value(1.0));
  EXPECT_EQ(param(state, "flag"), Value(false));
  EXPECT_TRUE(param(state, "dims").is_none());
}

TEST_F(Construction, IntGivenForAFloatBecomesAFloat) {
  ConstructionState state = conf->construct({{"width", Value(8)}, {"scale", Value(2)}});
  EXPECT_TRUE(param(state, "scale").is_float());
  EXPECT_EQ(param(state, "scale").as_float(), 2.0);
}

TEST_F(Construction, UnknownParam) {
  EXPECT_EQ(conf_error({{"width", Value(8)}, {"height", Value(2)}}),
            "ConfFwdOp: unknown param 'height'");
}

TEST_F(Construction, RequiredParamMissing) {
  EXPECT_EQ(conf_error({}), "ConfFwdOp: param 'width' is required");
}

TEST_F(Construction, IntForAStr) {
  EXPECT_EQ(conf_error({{"width", Value(8)}, {"name", Value(3)}}),
            "ConfFwdOp: param 'name' = 3 is not a str");
}

TEST_F(Construction, StringOutsideTheEnum) {
  EXPECT_EQ(conf_error({{"width", Value(8)}, {"mode", Value("yarn")}}),
            "ConfFwdOp: param 'mode' = 'yarn' is not a 'neox' | 'gptj'");
}

TEST_F(Construction, BoolForAnInt) {
  EXPECT_EQ(conf_error({{"width", Value(true)}}), "ConfFwdOp: param 'width' = True is not an int");
}

TEST_F(Construction, FloatForAnInt) {
  EXPECT_EQ(conf_error({{"width", Value(8.0)}}), "ConfFwdOp: param 'width' = 8.0 is not an int");
}

TEST_F(Construction, NonFiniteFloatIsNotAFloat) {
  EXPECT_EQ(
      conf_error({{"width", Value(8)}, {"scale", Value(std::numeric_limits<double>::infinity())}}),
      "ConfFwdOp: param 'scale' = inf is not a float");
  EXPECT_EQ(conf_error({{"width", Value(8)}, {"scale", Value(std::nan(""))}}),
            "ConfFwdOp: param 'scale' = nan is not a float");
}

TEST_F(Construction, IntForAnOptionalList) {
  EXPECT_EQ(conf_error({{"width", Value(8)}, {"dims", Value(1)}}),
            "ConfFwdOp: param 'dims' = 1 is not a list[int] | None");
}

TEST_F(Construction, NegativeIntParamUsedAsAnAxis) {
  EXPECT_EQ(conf_error({{"width", Value(-4)}}),
            "ConfFwdOp: param 'width' = -4 is an axis length of x and may not be negative");
}

TEST_F(Construction, RuleDecidableFromParamsFailsAtConstruction) {
  EXPECT_EQ(conf_error({{"width", Value(6)}}), "ConfFwdOp: shape_rules[0]: width % 4 == 0");
}

TEST_F(Construction, RuleReadingCallIndicesWaitsForTheCall) {
  ConstructionState state = conf->construct({{"width", Value(4)}});
  EXPECT_EQ(check_error([&] {
              conf->check(state, Inputs{cpu({0, 4})});
            }),
            "ConfFwdOp: shape_rules[1]: N > 0");
}

TEST_F(Construction, ParamInAShapeIsCheckedAtTheCall) {
  ConstructionState state = conf->construct({{"width", Value(4)}});
  EXPECT_EQ(check_error([&] {
              conf->check(state, Inputs{cpu({2, 8})});
            }),
            "ConfFwdOp: x shape does not match width: axis 1 is 8, expected 4");
}

TEST(DeviceParam, ThatNamesNoDeviceFailsAtConstructionNamingTheOpAndTheParam) {
  auto p = plan_from(kToy, "FillFwdOp");
  EXPECT_EQ(check_error([&] {
              p->construct({{"n", Value(4)}, {"device", Value("tpu:0")}});
            }),
            "FillFwdOp: param 'device' = 'tpu:0' is not a device; expected 'cpu', 'meta', 'cuda' "
            "or 'cuda:<index>'");
  EXPECT_EQ(check_error([&] {
              p->construct({{"n", Value(4)}, {"device", Value("cuda:01")}});
            }),
            "FillFwdOp: param 'device' = 'cuda:01' is not a device; expected 'cpu', 'meta', "
            "'cuda' or 'cuda:<index>'");
}

TEST(DeviceParam, DecidesTheDeviceOfACallWithoutTensors) {
  auto p = plan_from(kToy, "FillFwdOp");
  ConstructionState state = p->construct({{"n", Value(4)}, {"device", Value("cuda:1")}});
  EXPECT_EQ(state.device, Device::cuda(1));
  EXPECT_EQ(p->check(state, Inputs{}).device(), Device::cuda(1));
}

TEST(ConstructionTensor, IsRequiredUnlessOptional) {
  auto p = plan_from(kToy, "TableFwdOp");
  EXPECT_EQ(check_error([&] { p->construct({}); }),
            "TableFwdOp: construction-time tensor 'table' is required");
}

TEST(ConstructionTensor, UnifiesAtConstructionAndFixesTheCall) {
  auto p = plan_from(kToy, "TableFwdOp");
  std::optional<Tensor> table = cpu({5}, DType::kFloat32);
  ConstructionState state = p->construct({}, std::span<const std::optional<Tensor>>(&table, 1));
  auto call = p->check(state, Inputs{cpu({3}, DType::kInt64)});
  EXPECT_EQ(call.index("K"), Value(5));
  EXPECT_EQ(call.output(0).shape, (Shape{3, 5}));
  EXPECT_TRUE(call.present("table"));
}

TEST(ConstructionTensor, RuleOnItsIndicesFailsAtConstruction) {
  auto p = plan_from(kToy, "TableFwdOp");
  std::optional<Tensor> table = cpu({1}, DType::kFloat32);
  EXPECT_EQ(
      check_error([&] { p->construct({}, std::span<const std::optional<Tensor>>(&table, 1)); }),
      "TableFwdOp: shape_rules[0]: K > 1");
}

TEST(ConstructionTensor, DTypeIsChecked) {
  auto p = plan_from(kToy, "TableFwdOp");
  std::optional<Tensor> table = cpu({5}, DType::kFloat16);
  EXPECT_EQ(
      check_error([&] { p->construct({}, std::span<const std::optional<Tensor>>(&table, 1)); }),
      "TableFwdOp: table dtype is not float32; got float16");
}

}  // namespace
}  // namespace tileops::manifest
