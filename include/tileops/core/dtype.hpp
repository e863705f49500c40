// Element types, named as in PyTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tileops {

enum class DType : std::uint8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kFloat8E4M3FN,
  kFloat8E5M2,
};

inline constexpr int kNumDTypes = 12;

// What kind of number a dtype holds; the manifest's category() primitive reads it.
enum class DTypeCategory : std::uint8_t { kBool, kInt, kFloat };

// The PyTorch name without the "torch." prefix ("float16", "bfloat16", "float8_e4m3fn", ...).
std::string_view dtype_name(DType dtype) noexcept;
// Parses a name dtype_name() prints; nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

constexpr std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
  }
  return 0;
}

constexpr int dtype_bits(DType dtype) noexcept { return static_cast<int>(dtype_size(dtype)) * 8; }

constexpr DTypeCategory dtype_category(DType dtype) noexcept {
  switch (dtype) {
    case DType::kBool:
      return DTypeCategory::kBool;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return DTypeCategory::kInt;
    default:
      return DTypeCategory::kFloat;
  }
}

constexpr bool is_floating(DType dtype) noexcept {
  return dtype_category(dtype) == DTypeCategory::kFloat;
}

}  // namespace tileops
