// The strict loader on hostile files, the manifest fuzzer's ground (fuzz/fuzz_manifest.cpp): any
// bytes load into diagnostics, and what loads goes through the validator into more diagnostics,
// without a crash, a hang or an exception.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "manifest_test_util.hpp"
#include "tileops/manifest/validator.hpp"

namespace tileops::manifest {
namespace {

// The smallest valid entry of the family toy, with `params` spliced into its signature.
std::string toy_entry(const std::string& params) {
  return "ToyFwdOp:\n"
         "  family: toy\n"
         "  status: spec-only\n"
         "  signature:\n"
         "    params: {" +
         params +
         "}\n"
         "    inputs: {}\n"
         "    outputs: {}\n"
         "  workloads: [{label: w}]\n"
         "  roofline: {flops: \"1\"}\n";
}

std::vector<std::string> diagnostics_of(const std::string& text) {
  std::vector<std::string> diags;
  Manifest m = Manifest::parse("toy.yaml", text, diags);
  std::vector<std::string> more = validate(m);
  diags.insert(diags.end(), more.begin(), more.end());
  return diags;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Note [No std::regex in the loader]: a word of a million characters used to overflow the stack
// of the matcher for op names, families and scalars.
constexpr std::size_t kLongWord = 1'000'000;

// An implicit key is at most 1024 characters in YAML; an explicit one (`? key`) has no bound.
TEST(LoaderHostile, LongOpNameIsReportedNotOverflowed) {
  std::vector<std::string> d = diagnostics_of("? " + std::string(kLongWord, 'A') + "Op\n: 1\n");
  ASSERT_EQ(d.size(), 2u);  // the entry, which is no mapping, has no family either
  EXPECT_TRUE(ends_with(d[0], "Op: expected a mapping")) << d[0].substr(0, 80);
  EXPECT_TRUE(ends_with(d[1], "Op: family: '' is not a snake_case family name"));
  d = diagnostics_of("? " + std::string(kLongWord, 'a') + "\n: 1\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(ends_with(d[0], " is not an op class name ({PascalCase}[Fwd|Bwd]Op)"));
}

TEST(LoaderHostile, LongScalarIsReportedNotOverflowed) {
  std::vector<std::string> d =
      diagnostics_of(toy_entry("n: {type: int, default: " + std::string(kLongWord, '7') + "}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(ends_with(d[0], "7' is not an int")) << d[0].substr(0, 80);
  d = diagnostics_of(toy_entry("x: {type: float, default: 0." + std::string(kLongWord, '5') + "}"));
  EXPECT_TRUE(d.empty()) << d.at(0).substr(0, 80);
}

TEST(LoaderHostile, LongFamilyIsReportedNotOverflowed) {
  std::string text = toy_entry("");
  text.replace(text.find("family: toy"), 11, "family: " + std::string(kLongWord, 'x') + "-");
  std::vector<std::string> d = diagnostics_of(text);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(ends_with(d[1], "-' is not a snake_case family name")) << d[1].substr(0, 80);
}

}  // namespace
}  // namespace tileops::manifest
