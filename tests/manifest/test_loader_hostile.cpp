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

using testing::manifest_error;

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

// See Note [No std::regex in the loader]: a word of a million characters used to overflow the stack
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

// See Note [YAML exceptions]: yaml-cpp bounds its nesting and said "bad file" when it was passed.
TEST(LoaderHostile, DeepYamlIsReportedNotOverflowed) {
  std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(manifest_error([&] {
              Manifest::load_string(
                  "toy.yaml", toy_entry("dims: {type: \"list[int]\", default: " + deep + "}"));
            }),
            "toy.yaml:5:2049: YAML syntax: nested too deeply");
  std::string fits = std::string(500, '[') + std::string(500, ']');
  EXPECT_EQ(diagnostics_of(toy_entry("dims: {type: \"list[int]\", default: " + fits + "}")).size(),
            1u);  // a nested list is no list[int]
}

// See Note [No anchors or aliases]
TEST(LoaderHostile, AnchorsAndAliasesAreRefused) {
  // A list that contains itself: reading the default recursed until the stack overflowed.
  EXPECT_EQ(manifest_error([] {
              Manifest::load_string("toy.yaml",
                                    toy_entry("dims: {type: \"list[int]\", default: &d [1, *d]}"));
            }),
            "toy.yaml:5:49: YAML anchors and aliases are not supported: write the value out");
  // Each level doubles the last: reading the default took 2^40 steps.
  std::string doubling = "dims: {type: \"list[int]\", default: [&a0 [1]";
  for (int i = 1; i <= 40; ++i)
    doubling += ", &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
                std::to_string(i - 1) + "]";
  EXPECT_EQ(manifest_error([&] { Manifest::load_string("toy.yaml", toy_entry(doubling + "]}")); }),
            "toy.yaml:5:50: YAML anchors and aliases are not supported: write the value out");
  // Harmless reuse is refused too: the first anchor is the one reported.
  EXPECT_EQ(manifest_error([] {
              Manifest::load_string("toy.yaml", R"yaml(
ToyFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {T: "DType[float16 | float32]"}
    inputs: {}
    outputs: {}
  workloads:
    - {label: a, dtype_cases: &cases [{T: float16}]}
    - {label: b, dtype_cases: *cases}
  roofline: {flops: "1"}
)yaml");
            }),
            "toy.yaml:10:31: YAML anchors and aliases are not supported: write the value out");
}

}  // namespace
}  // namespace tileops::manifest
