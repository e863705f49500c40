// The validator on a corpus of broken manifests, tests/data/manifests/broken/<rule>.yaml: each
// file breaks one rule (its family is its file stem, so only the rule under test is broken) and
// yields exactly the pinned diagnostics, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "manifest_test_util.hpp"
#include "tileops/manifest/validator.hpp"

namespace tileops::manifest {
namespace {

const std::filesystem::path kBrokenDir =
    std::filesystem::path(TILEOPS_TEST_DATA_DIR) / "manifests" / "broken";

const std::map<std::string, std::vector<std::string>>& expected_diagnostics() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"alias_not_written",
       {"alias_not_written.yaml:9:10: ToyFwdOp: signature.outputs.y.alias: 'x' is not a written "
        "input"}},
      {"bad_default",
       {"bad_default.yaml:7:35: ToyFwdOp: signature.params.eps.default: 'fast' is not a float"}},
      {"bad_dtype_name",
       {"bad_dtype_name.yaml:5:27: ToyFwdOp: signature.forall.T: 'float17' is not a dtype"}},
      {"bad_forall_kind",
       {"bad_forall_kind.yaml:5:27: ToyFwdOp: signature.forall.N: kind is Dim, Shape, Seq[Int] or "
        "DType[...], not 'Dimension'"}},
      {"bad_label",
       {"bad_label.yaml:11:15: ToyFwdOp: workloads[0].label: 'two words' is not a label "
        "([A-Za-z0-9._-], 1 to 24 characters)"}},
      {"bad_op_name",
       {"bad_op_name.yaml:1:1: 'toy_fwd' is not an op class name ({PascalCase}[Fwd|Bwd]Op)"}},
      {"bad_param_type",
       {"bad_param_type.yaml:7:22: ToyFwdOp: signature.params.groups.type: 'tuple[int]' is not a "
        "param type"}},
      {"bad_shape",
       {"bad_shape.yaml:9:28: ToyFwdOp: signature.outputs.y.shape: a shape is written \"[axis, "
        "...]\", not \"*S\""}},
      {"bad_status",
       {"bad_status.yaml:3:11: ToyFwdOp: status: is 'implemented' or 'spec-only', not 'done'"}},
      {"composition_repeated_stage",
       {"composition_repeated_stage.yaml:16:9: PairFwdOp: composition.stages[1]: stage name 'a' "
        "repeats"}},
      {"composition_own_stage",
       {"composition_own_stage.yaml:15:9: ToyFwdOp: composition.stages[0]: a composite op cannot "
        "be its own stage"}},
      {"composition_unknown_op",
       {"composition_unknown_op.yaml:15:9: ToyFwdOp: composition.stages[0]: 'MissingFwdOp' is not "
        "an op of the manifest"}},
      {"dtype_cases_missing",
       {"dtype_cases_missing.yaml:11:7: ToyFwdOp: workloads[0]: gives no dtype_cases"}},
      {"dtype_cases_outside_set",
       {"dtype_cases_outside_set.yaml:11:7: ToyFwdOp: workloads[0].dtype_cases[0]: bfloat16 is not "
        "in T's set"}},
      {"dtype_cases_wrong_index",
       {"dtype_cases_wrong_index.yaml:11:7: ToyFwdOp: workloads[0].dtype_cases[0]: 'U' is not a "
        "DType index"}},
      {"dtype_combos_bad_column",
       {"dtype_combos_bad_column.yaml:12:9: ToyFwdOp: signature.dtype_combos[0]: 'U' is not a "
        "DType index or a dtype param"}},
      {"dtype_combos_bad_value",
       {"dtype_combos_bad_value.yaml:13:9: ToyFwdOp: signature.dtype_combos[1]: bfloat16 is not a "
        "dtype 'W' takes"}},
      {"dtype_combos_other_columns",
       {"dtype_combos_other_columns.yaml:13:9: ToyFwdOp: signature.dtype_combos[1]: every row "
        "names the same columns as the first"}},
      {"dtype_combos_repeated_row",
       {"dtype_combos_repeated_row.yaml:13:9: ToyFwdOp: signature.dtype_combos[1]: repeats an "
        "earlier row"}},
      {"duplicate_entry", {"duplicate_entry.yaml:14:1: ToyFwdOp: duplicate entry"}},
      {"duplicate_key", {"duplicate_key.yaml:4:3: ToyFwdOp: duplicate key 'status'"}},
      {"expr_syntax",
       {"expr_syntax.yaml:12:31: ToyFwdOp: roofline.flops: starred expressions are allowed only as "
        "shape axes in \"prod(S) +* 2\""}},
      {"family_mismatch",
       {"family_mismatch.yaml:2:11: ToyFwdOp: family: 'norm' does not match the file name "
        "family_mismatch.yaml"}},
      {"family-not-snake-case",
       {"family-not-snake-case.yaml:4:11: ToyFwdOp: family: 'family-not-snake-case' is not a "
        "snake_case family name"}},
      {"kind_error",
       {"kind_error.yaml:10:20: ToyFwdOp: signature.shape_rules[0]: expected a bool, got Int in "
        "\"len(S)\""}},
      {"let_cycle",
       {"let_cycle.yaml:10:15: ToyFwdOp: signature.let.a: lets form a cycle through 'a'"}},
      {"missing_field", {"missing_field.yaml:2:3: ToyFwdOp: roofline: is required"}},
      {"optional_never_omitted",
       {"optional_never_omitted.yaml:11:3: ToyFwdOp: workloads: no row omits the optional input "
        "'v'"}},
      {"optional_never_passed",
       {"optional_never_passed.yaml:11:3: ToyFwdOp: workloads: no row passes the optional input "
        "'v'"}},
      {"repeated_case_id",
       {"repeated_case_id.yaml:12:7: ToyFwdOp: workloads[1]: case id 'base-float16' repeats"}},
      {"row_not_instantiating",
       {"row_not_instantiating.yaml:12:7: ToyFwdOp: workloads[0]: does not instantiate: ToyFwdOp: "
        "shape_rules[0]: prod(S) > 100"}},
      {"shape_axis_syntax",
       {"shape_axis_syntax.yaml:9:37: ToyFwdOp: signature.outputs.y.shape: unexpected end of "
        "expression in \"[*S, 2 +]\""}},
      {"some_required_input",
       {"some_required_input.yaml:11:7: ToyFwdOp: workloads[0].some: 'x' is not an optional "
        "input"}},
      {"too_many_optional_inputs",
       {"too_many_optional_inputs.yaml:6:5: ToyFwdOp: signature.inputs: more than 12 optional "
        "inputs"}},
      {"two_out_buffers",
       {"two_out_buffers.yaml:10:10: ToyFwdOp: signature.outputs.z.buffer: at most one output "
        "declares buffer: out"}},
      {"unknown_key", {"unknown_key.yaml:4:3: ToyFwdOp: unknown key 'colour'"}},
      {"unknown_name",
       {"unknown_name.yaml:12:32: ToyFwdOp: roofline.flops: unknown name 'M' in \"prod(S) * M\""}},
      {"unknown_primitive",
       {"unknown_primitive.yaml:12:22: ToyFwdOp: roofline.flops: unknown function 'numel' in "
        "\"numel(S)\""}},
      {"unknown_tensor_key",
       {"unknown_tensor_key.yaml:7:36: ToyFwdOp: signature.inputs.x: unknown key 'layout'"}},
      {"unsolvable_axis",
       {"unsolvable_axis.yaml:4:3: ToyFwdOp: signature: no inference plan when the call passes "
        "[x]: x.shape axis 'M * M' cannot be solved: it needs one unknown name M in the form a * M "
        "+ e"}},
      {"unsolvable_ctor_tensor",
       {"unsolvable_ctor_tensor.yaml:6:5: ToyFwdOp: signature.params: table.shape axis 'M * M' "
        "cannot be solved: it needs one unknown name M in the form a * M + e"}},
      {"unsolvable_index",
       {"unsolvable_index.yaml:4:3: ToyFwdOp: signature: no inference plan when the call passes "
        "[x]: output y's shape reads 'M', which no input solves"}},
      {"unsolvable_splice",
       {"unsolvable_splice.yaml:4:3: ToyFwdOp: signature: no inference plan when the call passes "
        "[x]: x.shape [*S, *R] has more than one splice no input solves"}},
      {"workload_bad_axis",
       {"workload_bad_axis.yaml:11:7: ToyFwdOp: workloads[0].S: 4 is not a list of axis lengths"}},
      {"workload_extra_index",
       {"workload_extra_index.yaml:13:7: ToyFwdOp: workloads[1].N: is not a shape index of the "
        "inputs this row passes"}},
      {"workload_missing_index",
       {"workload_missing_index.yaml:11:7: ToyFwdOp: workloads[0]: gives no value for the index "
        "'S'"}},
      {"workload_missing_param",
       {"workload_missing_param.yaml:13:7: ToyFwdOp: workloads[0]: gives no value for the required "
        "param 'width'"}},
      {"workload_unknown_key",
       {"workload_unknown_key.yaml:11:29: ToyFwdOp: workloads[0]: unknown key 'Q': not a param or "
        "index of ToyFwdOp"}},
      {"write_only_without_mutated",
       {"write_only_without_mutated.yaml:7:10: ToyFwdOp: signature.inputs.x.write_only: write_only "
        "needs mutated"}},
      {"wrong_type",
       {"wrong_type.yaml:7:48: ToyFwdOp: signature.inputs.x.contiguous: expected true or false"}},
      {"yaml_syntax", {"yaml_syntax.yaml:13:1: YAML syntax: end of map flow not found"}},
  };
  return table;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(BrokenManifests, EachFileYieldsItsPinnedDiagnostics) {
  for (const auto& [name, want] : expected_diagnostics()) {
    std::vector<std::string> got = validate_files({(kBrokenDir / (name + ".yaml")).string()});
    EXPECT_EQ(joined(got), joined(want)) << name << ".yaml";
  }
}

TEST(BrokenManifests, EveryFileOfTheCorpusHasAnExpectation) {
  std::vector<std::string> missing;
  for (const auto& f : std::filesystem::directory_iterator(kBrokenDir)) {
    if (f.path().extension() != ".yaml") continue;
    if (!expected_diagnostics().count(f.path().stem().string()))
      missing.push_back(f.path().filename().string());
  }
  std::sort(missing.begin(), missing.end());
  EXPECT_TRUE(missing.empty()) << joined(missing);
}

TEST(BrokenManifests, StrictLoadingThrowsTheLoaderDiagnostics) {
  EXPECT_EQ(testing::manifest_error(
                [] { Manifest::load_file((kBrokenDir / "unknown_key.yaml").string()); }),
            "unknown_key.yaml:4:3: ToyFwdOp: unknown key 'colour'");
}

TEST(BrokenManifests, PlanBuildThrowsTheValidatorsDiagnostic) {
  Manifest m = Manifest::load_file((kBrokenDir / "unsolvable_index.yaml").string());
  EXPECT_EQ(testing::manifest_error([&] { SignaturePlan::build(m.entries().at(0)); }),
            "unsolvable_index.yaml:4:3: ToyFwdOp: signature: no inference plan when the call "
            "passes [x]: output y's "
            "shape reads 'M', which no input solves");
}

TEST(BrokenManifests, AnEntryBuiltInCodeIsReportedWithoutLineAndColumn) {
  Manifest m = Manifest::load_file((kBrokenDir / "unsolvable_index.yaml").string());
  auto entry = std::make_shared<Entry>(*m.entries().at(0));
  entry->origins = {};
  EXPECT_EQ(testing::manifest_error([&] { SignaturePlan::build(entry); }),
            "unsolvable_index.yaml: ToyFwdOp: signature: no inference plan when the call passes "
            "[x]: output y's "
            "shape reads 'M', which no input solves");
}

// The smallest valid entry of the family toy: no tensor, one workload row.
constexpr const char* kMinimalToy = R"yaml(
ToyFwdOp:
  family: toy
  status: spec-only
  signature: {inputs: {}, outputs: {}}
  workloads: [{label: w}]
  roofline: {flops: "1"}
)yaml";

TEST(Validator, UnreadableFile) {
  EXPECT_EQ(validate_files({"/nonexistent/toy.yaml"}),
            (std::vector<std::string>{"/nonexistent/toy.yaml: cannot read the file"}));
}

TEST(Validator, OpDeclaredInTwoFiles) {
  std::vector<std::string> diags;
  Manifest all = Manifest::parse("toy.yaml", kMinimalToy, diags);
  all.merge(Manifest::parse("toy_more.yaml", kMinimalToy, diags), diags);
  EXPECT_EQ(diags, (std::vector<std::string>{
                       "toy_more.yaml:2:1: ToyFwdOp: the op is also declared in toy.yaml:2:1"}));
  EXPECT_EQ(all.entries().size(), 1u);
}

TEST(Validator, ShardFileMayCarryItsFamily) {
  std::vector<std::string> diags;
  Manifest m = Manifest::parse("toy_extra.yaml", kMinimalToy, diags);
  EXPECT_TRUE(diags.empty()) << joined(diags);
  EXPECT_TRUE(validate(m).empty());
}

}  // namespace
}  // namespace tileops::manifest
