// The loader's reading of an input's `values` hint (docs/manifest.md §2): group_ends(<Dim>) on an
// int tensor is kept; another form, a name that is no Dim of the forall, or a float dtype is a
// diagnostic naming the entry and the field.
#include <gtest/gtest.h>

#include <string>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::manifest_error;

// A grouped entry whose offsets carry `hint` and have dtype `dtype`.
std::string grouped_entry(const std::string& hint, const std::string& dtype) {
  return R"yaml(
GroupFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, E: Dim, S: Shape, I: "DType[int32 | int64]"}
    inputs:
      x:       {dtype: float32, shape: "[M]"}
      offsets: {dtype: )yaml" +
         dtype + R"yaml(, shape: "[E]", values: ")yaml" + hint + R"yaml("}
    outputs:
      y: {dtype: float32, shape: "[M]"}
  workloads: [{label: w, M: 8, E: 2, S: [1], dtype_cases: [{I: int32}]}]
  roofline: {flops: "M"}
)yaml";
}

TEST(LoaderValuesHint, GroupEndsOfADimIsKept) {
  for (const char* dtype : {"int32", "I"}) {
    Manifest m = Manifest::load_string("toy.yaml", grouped_entry("group_ends(M)", dtype));
    EXPECT_EQ(m.at("GroupFwdOp").inputs.at(1).group_ends, "M") << dtype;
    EXPECT_EQ(m.at("GroupFwdOp").inputs.at(0).group_ends, "");
  }
}

TEST(LoaderValuesHint, MalformedHintsNameTheEntryAndTheField) {
  EXPECT_EQ(manifest_error(
                [] { Manifest::load_string("toy.yaml", grouped_entry("sorted(M)", "int32")); }),
            "toy.yaml:9:53: GroupFwdOp: signature.inputs.offsets.values: the only hint is "
            "group_ends(<Dim>), not 'sorted(M)'");
  EXPECT_EQ(manifest_error(
                [] { Manifest::load_string("toy.yaml", grouped_entry("group_ends(N)", "int32")); }),
            "toy.yaml:9:53: GroupFwdOp: signature.inputs.offsets.values: group_ends reads a Dim "
            "of signature.forall; 'N' is not one");
  EXPECT_EQ(manifest_error(
                [] { Manifest::load_string("toy.yaml", grouped_entry("group_ends(S)", "int32")); }),
            "toy.yaml:9:53: GroupFwdOp: signature.inputs.offsets.values: group_ends reads a Dim "
            "of signature.forall; 'S' is not one");
  EXPECT_EQ(manifest_error([] {
              Manifest::load_string("toy.yaml", grouped_entry("group_ends(M)", "float32"));
            }),
            "toy.yaml:9:55: GroupFwdOp: signature.inputs.offsets.values: group_ends needs an int "
            "dtype (int32 or int64), and dtype is 'float32'");
}

}  // namespace
}  // namespace tileops::manifest
