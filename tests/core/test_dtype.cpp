// DType names (as PyTorch prints them) and element sizes.
#include <gtest/gtest.h>

#include <string>

#include "tileops/core/dtype.hpp"

namespace tileops {
namespace {

struct DTypeFacts {
  DType dtype;
  const char* name;
  std::size_t size;
  DTypeCategory category;
};

const DTypeFacts kAllDTypes[] = {
    {DType::kBool, "bool", 1, DTypeCategory::kBool},
    {DType::kUInt8, "uint8", 1, DTypeCategory::kInt},
    {DType::kInt8, "int8", 1, DTypeCategory::kInt},
    {DType::kInt16, "int16", 2, DTypeCategory::kInt},
    {DType::kInt32, "int32", 4, DTypeCategory::kInt},
    {DType::kInt64, "int64", 8, DTypeCategory::kInt},
    {DType::kFloat16, "float16", 2, DTypeCategory::kFloat},
    {DType::kBFloat16, "bfloat16", 2, DTypeCategory::kFloat},
    {DType::kFloat32, "float32", 4, DTypeCategory::kFloat},
    {DType::kFloat64, "float64", 8, DTypeCategory::kFloat},
    {DType::kFloat8E4M3FN, "float8_e4m3fn", 1, DTypeCategory::kFloat},
    {DType::kFloat8E5M2, "float8_e5m2", 1, DTypeCategory::kFloat},
};

TEST(DType, TableCoversEveryEnumerator) {
  ASSERT_EQ(std::size(kAllDTypes), static_cast<std::size_t>(kNumDTypes));
  for (int index = 0; index < kNumDTypes; ++index) {
    EXPECT_EQ(static_cast<int>(kAllDTypes[index].dtype), index);
  }
}

TEST(DType, NamesAreThePyTorchNamesAndRoundTrip) {
  for (const DTypeFacts& facts : kAllDTypes) {
    EXPECT_EQ(dtype_name(facts.dtype), facts.name);
    EXPECT_EQ(parse_dtype(facts.name), facts.dtype) << facts.name;
    EXPECT_EQ(parse_dtype(dtype_name(facts.dtype)), facts.dtype) << facts.name;
  }
}

TEST(DType, ParseRejectsAnythingElse) {
  for (const char* name : {"", "torch.float16", "Float16", "float16 ", "half", "float", "double",
                           "bf16", "float8_e4m3", "float8_e4m3fnuz", "int", "long", "uint16"}) {
    EXPECT_EQ(parse_dtype(name), std::nullopt) << '"' << name << '"';
  }
}

TEST(DType, SizesBitsAndCategories) {
  for (const DTypeFacts& facts : kAllDTypes) {
    EXPECT_EQ(dtype_size(facts.dtype), facts.size) << facts.name;
    EXPECT_EQ(dtype_bits(facts.dtype), static_cast<int>(facts.size) * 8) << facts.name;
    EXPECT_EQ(dtype_category(facts.dtype), facts.category) << facts.name;
    EXPECT_EQ(is_floating(facts.dtype), facts.category == DTypeCategory::kFloat) << facts.name;
  }
}

}  // namespace
}  // namespace tileops
