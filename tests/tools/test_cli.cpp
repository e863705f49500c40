// The `tileops` CLI end to end: each subcommand runs as a process and its output is checked.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout only
};

Result run_cli(const std::string& args) {
  const std::string command = std::string("\"") + TILEOPS_CLI_PATH + "\" " + args + " 2>/dev/null";
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    r.out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

bool has_line_starting(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return true;
  return text.find("\n" + prefix) != std::string::npos;
}

TEST(Cli, ListShowsEveryOpWithDevices) {
  Result r = run_cli("list");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "op ")) << r.out;
  EXPECT_NE(r.out.find("RMSNormFwdOp"), std::string::npos);
  // A registered class lists its devices; a composite the union of its stages'; spec-only ops "-".
  EXPECT_NE(r.out.find("rms_norm_rowwise_cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("add:AddFwdOp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu"), std::string::npos);
}

TEST(Cli, DescribeShowsSignatureBranchesAndImplementations) {
  Result r =
      run_cli("describe RMSNormFwdOp --semantics \"" TILEOPS_SOURCE_DIR "/docs/manifest.md\"");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "# RMSNormFwdOp")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "| `normalized_shape` | `list[int]` | required | no |"))
      << r.out;
  EXPECT_NE(r.out.find("`tileops::norm_rms_norm_fwd_out`"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| `rms_norm_rowwise_cpu` |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rsqrt(mean(x^2) + eps)"), std::string::npos)
      << r.out;  // the semantics line
  EXPECT_NE(r.out.find("| bfloat16 | 2^-7 |"), std::string::npos) << r.out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first line where `got` and `want` differ, for the failure message.
std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int line = 1;; ++line) {
    const bool more_g = static_cast<bool>(std::getline(g, gl));
    const bool more_w = static_cast<bool>(std::getline(w, wl));
    if (!more_g && !more_w) return "they differ only in line endings";
    if (!more_g || !more_w || gl != wl)
      return "line " + std::to_string(line) + ": committed \"" + (more_w ? wl : "<end>") +
             "\", generated \"" + (more_g ? gl : "<end>") + "\"";
  }
}

// Note [Pages every build agrees on] in tools/cmd_describe.cpp: docs/ops holds exactly the pages
// `describe --all --write-docs` writes, byte for byte, in every build.
TEST(Cli, CommittedOpPagesAreCurrent) {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "tileops-docs-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path generated = pattern;
  const fs::path committed = fs::path(TILEOPS_SOURCE_DIR) / "docs" / "ops";
  const Result r = run_cli("describe --all --write-docs --docs-dir \"" + generated.string() +
                           "\" --semantics \"" TILEOPS_SOURCE_DIR "/docs/manifest.md\"");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string hint = "; run `tileops describe --all --write-docs` from the source root";
  std::set<std::string> pages;
  for (const auto& file : fs::directory_iterator(generated)) {
    const std::string name = file.path().filename().string();
    const std::string op = file.path().stem().string();
    pages.insert(name);
    if (!fs::exists(committed / name)) {
      ADD_FAILURE() << op << ": docs/ops/" << name << " is missing" << hint;
      continue;
    }
    const std::string want = read_file(committed / name);
    const std::string got = read_file(file.path());
    if (got != want)
      ADD_FAILURE() << op << ": docs/ops/" << name << " is out of date ("
                    << first_difference(got, want) << ")" << hint;
  }
  EXPECT_GE(pages.size(), 17u);  // one page per manifest entry
  for (const auto& file : fs::directory_iterator(committed))
    if (!pages.count(file.path().filename().string()))
      ADD_FAILURE() << "docs/ops/" << file.path().filename().string()
                    << " names no op of the manifest: delete it (`tileops describe --all "
                       "--write-docs` writes one page per op and deletes none)";
  fs::remove_all(generated);
}

TEST(Cli, RunPassesAgainstTheReference) {
  Result r = run_cli("run RMSNormFwdOp --max-elems 65536");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("scaled from"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "PASS")) << r.out;
}

TEST(Cli, ExplainShowsTheSelectionsOfOneCall) {
  Result r = run_cli("explain RMSNormFwdOp");
  ASSERT_EQ(r.status, 0) << r.out;
  // The best device present: the CPU here, cuda:0 on a GPU machine.
  EXPECT_NE(r.out.find("  RMSNormFwdOp#0.rms_norm\n    call:   NormCall(device="),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("serves: selected"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "    outcome: selected rms_norm_")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "  RMSNormFwdOp.rms_norm: rms_norm_")) << r.out;  // built
}

// On a CPU-only machine: the call stated for cuda:0 on meta tensors of the manifest's shapes, with
// stated facts; nothing runs, so the large case needs no scaling.
TEST(Cli, ExplainStatesACallForANamedDevice) {
  Result r = run_cli("explain RMSNormFwdOp --workload llama-8b-prefill --device cuda:0 --arch 80");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "RMSNormFwdOp: workload case llama-8b-prefill")) << r.out;
  EXPECT_NE(r.out.find("stated for cuda:0 on meta tensors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device facts: arch 80, "), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "  input x: bfloat16 [2048, 4096]")) << r.out;
  EXPECT_NE(r.out.find("NormCall(device=cuda:0, n=4096"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rms_norm_rowwise_cpu         wrong device: runs on [cpu], not cuda"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "nothing was selected, built or cached")) << r.out;
  EXPECT_EQ(r.out.find("scaled from"), std::string::npos) << r.out;
}

// A composite: each stage's selection on the shapes that stage receives.
TEST(Cli, ExplainStatesACompositesStages) {
  Result r = run_cli("explain ResidualRMSNormFwdOp --device cpu");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the kernel calls of each stage"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".add\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RMSNormFwdOp#"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    outcome: selected rms_norm_"), std::string::npos) << r.out;
}

TEST(Cli, BenchJsonIsAnArrayOfRows) {
  Result r = run_cli("bench RMSNormFwdOp --max-elems 65536 --repeat 3 --warmup 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  std::string s = r.out;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front(), '[');
  EXPECT_EQ(s.back(), ']');
  // Balanced braces outside strings, one object per workload case.
  int depth = 0, objects = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      depth += (c == '{' && depth == 1) ? (++objects, 1) : 1;
    else if (c == '}' || c == ']')
      --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_FALSE(in_string);
  EXPECT_GE(objects, 8);  // RMSNormFwdOp has 8 workload rows, some with several dtype cases
  for (const char* key :
       {"\"op\": \"RMSNormFwdOp\"", "\"case\":", "\"status\": \"ok\"",
        "\"time_s\":", "\"gb_per_s\":", "\"tflop_per_s\":", "\"fraction_of_ceiling\":"})
    EXPECT_NE(s.find(key), std::string::npos) << key;
}

}  // namespace
