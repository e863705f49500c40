// Generic per-element load/store for every DType (see numeric.hpp for the cast rules).
#include "tileops/core/numeric.hpp"

#include <cstring>

namespace tileops {
namespace {

template <typename T>
T load_unaligned(const void* element) noexcept {
  T value;
  std::memcpy(&value, element, sizeof(T));
  return value;
}

template <typename T>
void store_unaligned(T value, void* element) noexcept {
  std::memcpy(element, &value, sizeof(T));
}

// Float-to-integer truncation as x86-64's cvttsd2si does it: toward zero when the result fits,
// else the "integer indefinite" (the minimum value). The range tests are written so that NaN
// fails them. This is what PyTorch's static_cast produces on x86-64, made free of C++ UB.
std::int32_t truncate_to_int32(double value) noexcept {
  if (value > -2147483649.0 && value < 2147483648.0) return static_cast<std::int32_t>(value);
  return INT32_MIN;
}

std::int64_t truncate_to_int64(double value) noexcept {
  if (value >= -9223372036854775808.0 && value < 9223372036854775808.0) {
    return static_cast<std::int64_t>(value);
  }
  return INT64_MIN;
}

}  // namespace

double load_as_double(DType dtype, const void* element) noexcept {
  switch (dtype) {
    case DType::kBool:
      return load_unaligned<std::uint8_t>(element) != 0 ? 1.0 : 0.0;
    case DType::kUInt8:
      return load_unaligned<std::uint8_t>(element);
    case DType::kInt8:
      return load_unaligned<std::int8_t>(element);
    case DType::kInt16:
      return load_unaligned<std::int16_t>(element);
    case DType::kInt32:
      return load_unaligned<std::int32_t>(element);
    case DType::kInt64:
      return static_cast<double>(load_unaligned<std::int64_t>(element));
    case DType::kFloat16:
      return float16_bits_to_float(load_unaligned<std::uint16_t>(element));
    case DType::kBFloat16:
      return bfloat16_bits_to_float(load_unaligned<std::uint16_t>(element));
    case DType::kFloat32:
      return load_unaligned<float>(element);
    case DType::kFloat64:
      return load_unaligned<double>(element);
    case DType::kFloat8E4M3FN:
      return float8_e4m3fn_bits_to_float(load_unaligned<std::uint8_t>(element));
    case DType::kFloat8E5M2:
      return float8_e5m2_bits_to_float(load_unaligned<std::uint8_t>(element));
  }
  return 0.0;
}

void store_from_double(DType dtype, double value, void* element) noexcept {
  switch (dtype) {
    case DType::kBool:
      store_unaligned<std::uint8_t>(value != 0.0 ? 1 : 0, element);
      return;
    case DType::kUInt8:
      // PyTorch routes float -> uint8 through int64 so that negative values wrap.
      store_unaligned(static_cast<std::uint8_t>(truncate_to_int64(value)), element);
      return;
    case DType::kInt8:
      store_unaligned(static_cast<std::int8_t>(truncate_to_int32(value)), element);
      return;
    case DType::kInt16:
      store_unaligned(static_cast<std::int16_t>(truncate_to_int32(value)), element);
      return;
    case DType::kInt32:
      store_unaligned(truncate_to_int32(value), element);
      return;
    case DType::kInt64:
      store_unaligned(truncate_to_int64(value), element);
      return;
    case DType::kFloat16:
      store_unaligned(double_to_float16_bits(value), element);
      return;
    case DType::kBFloat16:
      store_unaligned(double_to_bfloat16_bits(value), element);
      return;
    case DType::kFloat32:
      store_unaligned(static_cast<float>(value), element);
      return;
    case DType::kFloat64:
      store_unaligned(value, element);
      return;
    case DType::kFloat8E4M3FN:
      store_unaligned(double_to_float8_e4m3fn_bits(value), element);
      return;
    case DType::kFloat8E5M2:
      store_unaligned(double_to_float8_e5m2_bits(value), element);
      return;
  }
}

}  // namespace tileops
