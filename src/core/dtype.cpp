// DType names, spelled as PyTorch prints them without the "torch." prefix.
#include "tileops/core/dtype.hpp"

#include <array>

namespace tileops {
namespace {

// Indexed by the enum's value; the static_assert below keeps it in step with the enum.
constexpr std::array<std::string_view, kNumDTypes> kDTypeNames = {
    "bool",    "uint8",    "int8",    "int16",   "int32",         "int64",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
};

static_assert(static_cast<int>(DType::kFloat8E5M2) + 1 == kNumDTypes);
static_assert(kDTypeNames[static_cast<int>(DType::kBFloat16)] == "bfloat16");
static_assert(kDTypeNames[static_cast<int>(DType::kFloat8E4M3FN)] == "float8_e4m3fn");

}  // namespace

std::string_view dtype_name(DType dtype) noexcept {
  const auto index = static_cast<std::size_t>(dtype);
  return index < kDTypeNames.size() ? kDTypeNames[index] : std::string_view("<invalid dtype>");
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (std::size_t index = 0; index < kDTypeNames.size(); ++index) {
    if (kDTypeNames[index] == name) return static_cast<DType>(index);
  }
  return std::nullopt;
}

}  // namespace tileops
