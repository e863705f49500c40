// An entry tileops_opgen cannot turn into a class fails the build with a message naming the file,
// line, entry and field; no op is skipped silently. Each file under tests/codegen/broken/ is one
// such entry; the generator runs on it as the build runs it.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct OpgenRun {
  int status = 0;
  std::string output;
};

OpgenRun run_opgen(const std::string& manifest_file) {
  const std::string command = std::string(TILEOPS_OPGEN_PATH) + " --include-dir " +
                              TILEOPS_CODEGEN_SCRATCH + "/include --source-dir " +
                              TILEOPS_CODEGEN_SCRATCH + "/src " + manifest_file + " 2>&1";
  OpgenRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::array<char, 512> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) run.output += buffer.data();
  run.status = pclose(pipe);
  return run;
}

struct BrokenEntry {
  const char* file;
  const char* message;
};

class OpgenRefuses : public ::testing::TestWithParam<BrokenEntry> {};

TEST_P(OpgenRefuses, NamingTheEntryAndField) {
  const BrokenEntry& b = GetParam();
  const OpgenRun run = run_opgen(std::string(TILEOPS_CODEGEN_DIR) + "/broken/" + b.file);
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_NE(run.output.find(b.message), std::string::npos) << run.output;
}

INSTANTIATE_TEST_SUITE_P(
    Codegen, OpgenRefuses,
    ::testing::Values(
        BrokenEntry{"keyword_param.yaml",
                    "keyword_param.yaml:7:14: KeywordParamFwdOp: signature.params.class: 'class' "
                    "is a C++ keyword"},
        BrokenEntry{"keyword_output.yaml",
                    "keyword_output.yaml:9:15: KeywordOutputFwdOp: signature.outputs.return: "
                    "'return' is a C++ keyword"},
        BrokenEntry{"member_clash.yaml",
                    "member_clash.yaml:7:15: MemberClashFwdOp: signature.params.params: 'params' "
                    "clashes with a member every op class has"},
        BrokenEntry{"options_input.yaml",
                    "options_input.yaml:7:16: OptionsInputFwdOp: signature.inputs.options: "
                    "'options' names the call's options argument"},
        BrokenEntry{"stage_spec_only.yaml",
                    "stage_spec_only.yaml:26:9: ComposedFwdOp: composition.stages.inner.op: "
                    "PlannedFwdOp is spec-only, so it has no op class"},
        BrokenEntry{"unknown_param_type.yaml",
                    "unknown_param_type.yaml:7:21: UnknownTypeFwdOp: signature.params.table.type: "
                    "'dict[str, int]' is not a param type"}),
    [](const ::testing::TestParamInfo<BrokenEntry>& param_info) {
      std::string name = param_info.param.file;
      return name.substr(0, name.find('.'));
    });

}  // namespace
