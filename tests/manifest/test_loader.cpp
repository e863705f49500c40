// The strict loader: what it reads into an Entry, and how it reports what it refuses.
#include <gtest/gtest.h>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::manifest_error;

constexpr const char* kToy = R"yaml(
ScaleFwdOp:
  family: toy
  status: implemented
  ref_api: torch.mul
  signature:
    forall: {S: Shape, T: "DType[float16 | bfloat16]"}
    params:
      factor: {type: "int | float", default: 2, kw_only: true}
      mode:   {type: "'fast' | 'exact'", default: fast}
    inputs:
      x:   {dtype: T, shape: "[*S]", contiguous: true}
      acc: {dtype: float32, shape: "[*S]", optional: true, mutated: "mode == 'exact'"}
    outputs:
      y: {dtype: T, shape: "[*S]", buffer: out}
    let: {n: "prod(S)"}
    shape_rules: ["len(S) > 0"]
  workloads:
    - {label: a, S: [4], some: [acc], dtype_cases: [{T: float16}, {T: bfloat16}]}
    - {label: b, S: [2, 2], factor: 0.5, dtype_cases: [{T: float16}]}
  roofline: {flops: "n", bytes: "bytes(x) * 2"}
)yaml";

TEST(Loader, ReadsEveryFieldOfAnEntry) {
  Manifest m = Manifest::load_string("toy.yaml", kToy);
  const Entry& e = m.at("ScaleFwdOp");
  EXPECT_EQ(e.family, "toy");
  EXPECT_EQ(e.status, "implemented");
  EXPECT_EQ(e.ref_api, "torch.mul");
  EXPECT_EQ(e.file, "toy.yaml");
  ASSERT_EQ(e.forall.size(), 2u);
  EXPECT_EQ(e.forall[1].kind, IndexKind::kDType);
  EXPECT_EQ(e.forall[1].dtypes, (std::vector<DType>{DType::kFloat16, DType::kBFloat16}));
  ASSERT_EQ(e.params.size(), 2u);
  EXPECT_EQ(e.params[0].type.kind, ParamKind::kNumber);
  EXPECT_TRUE(e.params[0].kw_only);
  EXPECT_EQ(e.params[0].default_value, Value(2));
  EXPECT_EQ(e.params[1].type.enum_values, (std::vector<std::string>{"fast", "exact"}));
  ASSERT_EQ(e.inputs.size(), 2u);
  EXPECT_TRUE(e.inputs[0].contiguous);
  EXPECT_TRUE(e.inputs[1].optional);
  ASSERT_TRUE(e.inputs[1].mutated_when.has_value());
  EXPECT_EQ(e.inputs[1].mutated_when->source, "mode == 'exact'");
  EXPECT_TRUE(e.outputs[0].buffer_out);
  EXPECT_EQ(e.lets.at(0).name, "n");
  EXPECT_EQ(e.shape_rules.at(0).source, "len(S) > 0");
  ASSERT_EQ(e.workloads.size(), 2u);
  EXPECT_EQ(e.workloads[0].some, (std::vector<std::string>{"acc"}));
  EXPECT_EQ(e.workloads[0].dtype_cases.size(), 2u);
  EXPECT_EQ(e.workloads[1].params.at("factor"), Value(0.5));
  EXPECT_EQ(e.workloads[1].indices.at(0).second, Value(Shape{2, 2}));
  ASSERT_TRUE(e.roofline.bytes.has_value());
  EXPECT_EQ(e.roofline.bytes->source, "bytes(x) * 2");
}

TEST(Loader, ExpressionsKnowTheirLineAndColumn) {
  Manifest m = Manifest::load_string("toy.yaml", kToy);
  const Entry& e = m.at("ScaleFwdOp");
  EXPECT_EQ(e.shape_rules.at(0).origin.str(),
            "toy.yaml:17:20: ScaleFwdOp: signature.shape_rules[0]");
  EXPECT_EQ(e.inputs[0].shape.axes.at(0).expr.origin.column, 33);  // the S after the star
}

TEST(Loader, SectionsKnowTheirLineAndColumn) {
  Manifest m = Manifest::load_string("toy.yaml", kToy);
  const EntryOrigins& o = m.at("ScaleFwdOp").origins;
  auto at = [](const Origin& x) {
    return std::to_string(x.line) + ":" + std::to_string(x.column) + " " + x.field;
  };
  EXPECT_EQ(at(o.name), "2:1 ");
  EXPECT_EQ(at(o.family), "3:11 family");
  EXPECT_EQ(at(o.signature), "6:3 signature");
  EXPECT_EQ(at(o.params), "8:5 signature.params");
  EXPECT_EQ(at(o.inputs), "11:5 signature.inputs");
  EXPECT_EQ(at(o.workloads), "18:3 workloads");
  EXPECT_TRUE(o.dtype_combos.empty());
}

TEST(Loader, StrictLoadingListsEveryProblemOnePerLine) {
  EXPECT_EQ(manifest_error([] {
              Manifest::load_string("toy.yaml", R"yaml(
BadFwdOp:
  family: toy
  status: maybe
  colour: red
  signature: {inputs: {}, outputs: {}}
  workloads: [{label: w}]
  roofline: {flops: "1"}
)yaml");
            }),
            "toy.yaml:5:3: BadFwdOp: unknown key 'colour'\n"
            "toy.yaml:4:11: BadFwdOp: status: is 'implemented' or 'spec-only', not 'maybe'");
}

TEST(Loader, EmptyFileIsNotAManifest) {
  EXPECT_EQ(manifest_error([] { Manifest::load_string("toy.yaml", ""); }),
            "toy.yaml:1:1: a manifest file is a non-empty mapping of op names to entries");
}

TEST(Loader, FileNameIsReportedWithoutItsDirectory) {
  EXPECT_EQ(manifest_error([] { Manifest::load_string("some/dir/toy.yaml", "[1, 2]"); }),
            "toy.yaml:1:1: a manifest file is a non-empty mapping of op names to entries");
}

TEST(Loader, MergeRefusesAnOpDeclaredTwice) {
  Manifest a = Manifest::load_string("toy.yaml", kToy);
  Manifest b = Manifest::load_string("toy_copy.yaml", kToy);
  EXPECT_EQ(manifest_error([&] { a.merge(b); }),
            "toy_copy.yaml:2:1: ScaleFwdOp: the op is also declared in toy.yaml:2:1");
}

TEST(Loader, ToyEntriesDoNotLeakIntoTheBuiltinManifest) {
  Manifest::load_string("toy.yaml", kToy);
  EXPECT_EQ(Manifest::builtin().find("ScaleFwdOp"), nullptr);
}

}  // namespace
}  // namespace tileops::manifest
