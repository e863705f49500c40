// Narrow float conversions against (1) tables generated from numpy/ml_dtypes with PyTorch's
// NaN rules (scripts/gen_dtype_tables.py) and (2) an exact oracle written here from the format
// definitions alone: values are built with std::ldexp and rounding is decided by comparing
// exact double distances, so no library code is trusted to test itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tileops/core/numeric.hpp"

namespace tileops {
namespace {

std::string table_path(const std::string& file) {
  return std::string(TILEOPS_TEST_DATA_DIR) + "/dtype_tables/" + file;
}

// Rows of hex numbers, '#' lines skipped; a "xxxx:" row prefix is returned as the first cell.
std::vector<std::vector<std::uint32_t>> read_hex_rows(const std::string& file) {
  std::ifstream in(table_path(file));
  EXPECT_TRUE(in.good()) << "cannot open " << table_path(file);
  std::vector<std::vector<std::uint32_t>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ':', ' ');
    std::istringstream cells(line);
    std::vector<std::uint32_t> row;
    std::uint32_t cell = 0;
    while (cells >> std::hex >> cell) row.push_back(cell);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Widened float32 bits for every pattern of a type, from "<name>_to_float32.txt".
std::vector<std::uint32_t> read_decode_table(const std::string& name) {
  std::vector<std::uint32_t> values;
  for (const auto& row : read_hex_rows(name + "_to_float32.txt")) {
    EXPECT_EQ(row.at(0), values.size()) << name << ": rows out of order";
    values.insert(values.end(), row.begin() + 1, row.end());
  }
  return values;
}

// One narrow format as its definition states it, plus the library functions under test.
struct NarrowFormat {
  const char* name;
  int total_bits;
  int mantissa_bits;
  int bias;
  bool has_infinity;         // IEEE-like: exponent all ones means Inf (mantissa 0) or NaN.
  std::uint32_t max_finite;  // magnitude encoding of the largest finite value
  std::uint32_t nan_magnitude;
  bool nan_keeps_sign;
  float (*decode)(std::uint32_t);
  std::uint32_t (*encode)(float);
  std::uint32_t (*encode_saturating)(float);  // null where there is none
  std::uint32_t (*encode_double)(double);

  std::uint32_t sign_bit() const { return 1u << (total_bits - 1); }
  bool is_nan(std::uint32_t bits) const {
    const std::uint32_t magnitude = bits & (sign_bit() - 1);
    return has_infinity ? magnitude > (max_finite + 1) : magnitude == nan_magnitude;
  }
  // Exact value of a magnitude encoding, treating max_finite + 1 as the next finite step.
  double magnitude_value(std::uint32_t magnitude) const {
    const std::uint32_t exponent = magnitude >> mantissa_bits;
    const std::uint32_t mantissa = magnitude & ((1u << mantissa_bits) - 1);
    if (exponent == 0) return std::ldexp(double(mantissa), 1 - bias - mantissa_bits);
    return std::ldexp(double((1u << mantissa_bits) + mantissa),
                      int(exponent) - bias - mantissa_bits);
  }
  std::uint32_t nan_for(bool negative) const {
    return nan_magnitude | (negative && nan_keeps_sign ? sign_bit() : 0u);
  }
};

const NarrowFormat kFloat16{
    .name = "float16",
    .total_bits = 16,
    .mantissa_bits = 10,
    .bias = 15,
    .has_infinity = true,
    .max_finite = 0x7BFF,
    .nan_magnitude = 0x7E00,
    .nan_keeps_sign = true,
    .decode = [](std::uint32_t b) { return float16_bits_to_float(std::uint16_t(b)); },
    .encode = [](float f) -> std::uint32_t { return float_to_float16_bits(f); },
    .encode_saturating = nullptr,
    .encode_double = [](double d) -> std::uint32_t { return double_to_float16_bits(d); },
};
const NarrowFormat kBFloat16{
    .name = "bfloat16",
    .total_bits = 16,
    .mantissa_bits = 7,
    .bias = 127,
    .has_infinity = true,
    .max_finite = 0x7F7F,
    .nan_magnitude = 0x7FC0,
    .nan_keeps_sign = false,
    .decode = [](std::uint32_t b) { return bfloat16_bits_to_float(std::uint16_t(b)); },
    .encode = [](float f) -> std::uint32_t { return float_to_bfloat16_bits(f); },
    .encode_saturating = nullptr,
    .encode_double = [](double d) -> std::uint32_t { return double_to_bfloat16_bits(d); },
};
const NarrowFormat kFloat8E4M3FN{
    .name = "float8_e4m3fn",
    .total_bits = 8,
    .mantissa_bits = 3,
    .bias = 7,
    .has_infinity = false,
    .max_finite = 0x7E,
    .nan_magnitude = 0x7F,
    .nan_keeps_sign = true,
    .decode = [](std::uint32_t b) { return float8_e4m3fn_bits_to_float(std::uint8_t(b)); },
    .encode = [](float f) -> std::uint32_t { return float_to_float8_e4m3fn_bits(f); },
    .encode_saturating = [](float f) -> std::uint32_t {
      return float_to_float8_e4m3fn_bits_saturating(f);
    },
    .encode_double = [](double d) -> std::uint32_t { return double_to_float8_e4m3fn_bits(d); },
};
const NarrowFormat kFloat8E5M2{
    .name = "float8_e5m2",
    .total_bits = 8,
    .mantissa_bits = 2,
    .bias = 15,
    .has_infinity = true,
    .max_finite = 0x7B,
    .nan_magnitude = 0x7F,
    .nan_keeps_sign = true,
    .decode = [](std::uint32_t b) { return float8_e5m2_bits_to_float(std::uint8_t(b)); },
    .encode = [](float f) -> std::uint32_t { return float_to_float8_e5m2_bits(f); },
    .encode_saturating = [](float f) -> std::uint32_t {
      return float_to_float8_e5m2_bits_saturating(f);
    },
    .encode_double = [](double d) -> std::uint32_t { return double_to_float8_e5m2_bits(d); },
};

const NarrowFormat* const kFormats[] = {&kFloat16, &kBFloat16, &kFloat8E4M3FN, &kFloat8E5M2};

// The oracle: round |x| to nearest over the exact value ladder, ties to the even encoding.
// Landing on max_finite + 1 is overflow: Inf where the format has it, NaN for e4m3fn (PyTorch's
// rule), the largest finite value when saturating.
class Oracle {
 public:
  explicit Oracle(const NarrowFormat& format) : format_(format) {
    for (std::uint32_t m = 0; m <= format.max_finite + 1; ++m) {
      ladder_.push_back(format.magnitude_value(m));
    }
  }

  const std::vector<double>& ladder() const { return ladder_; }

  std::uint32_t encode(double x, bool saturate) const {
    const bool negative = std::signbit(x);
    if (std::isnan(x)) return format_.nan_for(negative);
    const std::uint32_t sign = negative ? format_.sign_bit() : 0u;
    const std::uint32_t overflow = saturate               ? format_.max_finite
                                   : format_.has_infinity ? format_.max_finite + 1
                                                          : format_.nan_magnitude;
    const double magnitude = std::fabs(x);
    if (magnitude >= ladder_.back()) return sign | overflow;
    const auto above = std::upper_bound(ladder_.begin(), ladder_.end(), magnitude);
    const auto below = static_cast<std::uint32_t>(above - ladder_.begin() - 1);
    const double to_below = magnitude - ladder_[below];
    const double to_above = ladder_[below + 1] - magnitude;
    std::uint32_t nearest = below;
    if (to_above < to_below || (to_above == to_below && below % 2 == 1)) nearest = below + 1;
    return sign | (nearest > format_.max_finite ? overflow : nearest);
  }

 private:
  const NarrowFormat& format_;
  std::vector<double> ladder_;
};

float next_up(float x) { return std::nextafter(x, INFINITY); }
float next_down(float x) { return std::nextafter(x, -INFINITY); }

// Every value, every midpoint between neighbours, and one float32 ulp either side of each,
// with both signs; values that do not fit in float32 (bfloat16's virtual step 2^128) are skipped.
std::vector<float> encode_probes(const Oracle& oracle) {
  const auto& ladder = oracle.ladder();
  std::vector<float> probes;
  auto add = [&probes](double exact) {
    const auto f = static_cast<float>(exact);
    if (!std::isfinite(f) || double(f) != exact) return;
    for (float p : {f, next_up(f), next_down(f)}) {
      probes.push_back(p);
      probes.push_back(-p);
    }
  };
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    add(ladder[i]);
    if (i + 1 < ladder.size()) add((ladder[i] + ladder[i + 1]) / 2);
  }
  return probes;
}

std::string hex(std::uint32_t bits) {
  std::ostringstream out;
  out << "0x" << std::hex << bits;
  return out.str();
}

TEST(NarrowFloatDecode, EveryPatternMatchesTheTable) {
  for (const NarrowFormat* format : kFormats) {
    const std::vector<std::uint32_t> table = read_decode_table(format->name);
    ASSERT_EQ(table.size(), std::size_t{1} << format->total_bits) << format->name;
    const Oracle oracle(*format);
    int mismatches = 0;
    for (std::uint32_t bits = 0; bits < table.size(); ++bits) {
      const std::uint32_t decoded = float_to_bits(format->decode(bits));
      if (decoded != table[bits] && ++mismatches <= 5) {
        ADD_FAILURE() << format->name << " " << hex(bits) << " decodes to " << hex(decoded)
                      << ", table says " << hex(table[bits]);
      }
      // The table itself must agree with the format definition.
      const std::uint32_t magnitude = bits & (format->sign_bit() - 1);
      const bool negative = (bits & format->sign_bit()) != 0;
      const float reference = float_from_bits(table[bits]);
      if (format->is_nan(bits)) {
        EXPECT_TRUE(std::isnan(reference)) << format->name << " " << hex(bits);
      } else if (magnitude <= format->max_finite) {
        const double exact = oracle.ladder()[magnitude];
        EXPECT_EQ(double(reference), negative ? -exact : exact) << format->name << " " << hex(bits);
      } else {
        EXPECT_TRUE(std::isinf(reference)) << format->name << " " << hex(bits);
      }
      EXPECT_EQ(std::signbit(reference), negative) << format->name << " " << hex(bits);
    }
    EXPECT_EQ(mismatches, 0) << format->name;
  }
}

TEST(NarrowFloatEncode, EveryPatternRoundTripsExceptNaNPayloads) {
  for (const NarrowFormat* format : kFormats) {
    for (std::uint32_t bits = 0; bits < (1u << format->total_bits); ++bits) {
      const float widened = format->decode(bits);
      const bool negative = (bits & format->sign_bit()) != 0;
      const std::uint32_t expected = format->is_nan(bits) ? format->nan_for(negative) : bits;
      ASSERT_EQ(format->encode(widened), expected) << format->name << " " << hex(bits);
      ASSERT_EQ(format->encode_double(double(widened)), expected)
          << format->name << " " << hex(bits);
    }
  }
}

TEST(NarrowFloatEncode, ValuesMidpointsAndNeighboursMatchTheExactOracle) {
  for (const NarrowFormat* format : kFormats) {
    const Oracle oracle(*format);
    const std::vector<float> probes = encode_probes(oracle);
    ASSERT_GT(probes.size(), 6u * oracle.ladder().size()) << format->name;
    for (float x : probes) {
      ASSERT_EQ(format->encode(x), oracle.encode(x, false))
          << format->name << " from float " << hex(float_to_bits(x));
      if (format->encode_saturating != nullptr) {
        ASSERT_EQ(format->encode_saturating(x), oracle.encode(x, true))
            << format->name << " saturating from float " << hex(float_to_bits(x));
      }
    }
  }
}

TEST(NarrowFloatEncode, SpecialAndTinyFloat32InputsMatchTheExactOracle) {
  std::vector<float> inputs;
  // Zero, Inf, NaNs (quiet, signalling, full payload), the largest float, then float32
  // subnormals and the smallest normal: below every format's range except bfloat16's.
  for (std::uint32_t bits :
       {0x00000000u, 0x7F800000u, 0x7FC00000u, 0x7F800001u, 0x7FA00000u, 0x7FFFFFFFu, 0x7F7FFFFFu,
        0x00000001u, 0x00000002u, 0x00000003u, 0x00007FFFu, 0x00008000u, 0x00008001u, 0x00018000u,
        0x00400000u, 0x007FFFFFu, 0x00800000u}) {
    inputs.push_back(float_from_bits(bits));
  }
  for (const NarrowFormat* format : kFormats) {
    const Oracle oracle(*format);
    for (float x : inputs) {
      for (float signed_x : {x, -x}) {
        EXPECT_EQ(format->encode(signed_x), oracle.encode(signed_x, false))
            << format->name << " from " << hex(float_to_bits(signed_x));
        if (format->encode_saturating != nullptr) {
          EXPECT_EQ(format->encode_saturating(signed_x), oracle.encode(signed_x, true))
              << format->name << " saturating from " << hex(float_to_bits(signed_x));
        }
      }
    }
  }
}

TEST(NarrowFloatEncode, MatchesTheGeneratedTable) {
  const auto rows = read_hex_rows("float32_to_narrow.txt");
  ASSERT_GT(rows.size(), 4000u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 7u);
    const float x = float_from_bits(row[0]);
    const std::string from = " from " + hex(row[0]);
    EXPECT_EQ(float_to_float16_bits(x), row[1]) << "float16" << from;
    EXPECT_EQ(float_to_bfloat16_bits(x), row[2]) << "bfloat16" << from;
    EXPECT_EQ(float_to_float8_e4m3fn_bits(x), row[3]) << "float8_e4m3fn" << from;
    EXPECT_EQ(float_to_float8_e5m2_bits(x), row[4]) << "float8_e5m2" << from;
    EXPECT_EQ(float_to_float8_e4m3fn_bits_saturating(x), row[5]) << "e4m3fn saturating" << from;
    EXPECT_EQ(float_to_float8_e5m2_bits_saturating(x), row[6]) << "e5m2 saturating" << from;
  }
}

// The rules Note [Narrow float casts] states, pinned by value so a reader sees them here too.
TEST(NarrowFloatEncode, PyTorchSpecialValueRules) {
  EXPECT_EQ(float_to_float16_bits(-NAN), 0xFE00);
  EXPECT_EQ(float_to_bfloat16_bits(-NAN), 0x7FC0);  // sign dropped
  EXPECT_EQ(float_to_float8_e4m3fn_bits(-INFINITY), 0xFF);
  EXPECT_EQ(float_to_float8_e4m3fn_bits(464.0f), 0x7E);  // tie to even: 448
  EXPECT_EQ(float_to_float8_e4m3fn_bits(next_up(464.0f)), 0x7F);
  EXPECT_EQ(float_to_float8_e4m3fn_bits(-480.0f), 0xFF);
  EXPECT_EQ(float_to_float8_e5m2_bits(61440.0f), 0x7C);  // tie to even: Inf
  EXPECT_EQ(float_to_float8_e5m2_bits(next_down(61440.0f)), 0x7B);
  EXPECT_EQ(float_to_float8_e5m2_bits(-NAN), 0xFF);
  EXPECT_EQ(float_to_float16_bits(65520.0f), 0x7C00);  // tie past 65504 goes to Inf
  EXPECT_EQ(float_to_float16_bits(next_down(65520.0f)), 0x7BFF);
  EXPECT_EQ(float_to_float16_bits(0x1p-25f), 0x0000);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(float_to_float16_bits(next_up(0x1p-25f)), 0x0001);
  EXPECT_EQ(float_to_float16_bits(-0x1p-26f), 0x8000);
  EXPECT_EQ(float_to_float8_e4m3fn_bits_saturating(1e30f), 0x7E);
  EXPECT_EQ(float_to_float8_e4m3fn_bits_saturating(-INFINITY), 0xFE);
  EXPECT_EQ(float_to_float8_e5m2_bits_saturating(INFINITY), 0x7B);
  EXPECT_TRUE(std::isnan(float(Float8E5M2::from_bits(float_to_float8_e5m2_bits_saturating(NAN)))));
}

// PyTorch builds a narrow value from a double by converting to float first, so a double just
// above a narrow midpoint can land on the midpoint in float and then tie to even.
TEST(NarrowFloatEncode, DoubleSourcesRoundThroughFloat) {
  const double above_half_midpoint = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(double_to_float16_bits(above_half_midpoint), 0x3C00);
  EXPECT_EQ(Oracle(kFloat16).encode(above_half_midpoint, false), 0x3C01u);  // single rounding
  EXPECT_EQ(double_to_bfloat16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3F80);
  EXPECT_EQ(double_to_float8_e4m3fn_bits(1.0 + 0x1p-4 + 0x1p-40), 0x38);
  EXPECT_EQ(double_to_float8_e5m2_bits(1.0 + 0x1p-3 + 0x1p-40), 0x3C);
  EXPECT_EQ(double_to_float16_bits(1e300), 0x7C00);
  EXPECT_EQ(double_to_float8_e4m3fn_bits(-1e300), 0xFF);
  EXPECT_EQ(double_to_float16_bits(-1e-300), 0x8000);
}

TEST(NarrowFloatValueTypes, ConvertThroughTheBitFunctions) {
  static_assert(Half(1.5f).bits == 0x3E00);
  static_assert(float(Half::from_bits(0x3C00)) == 1.0f);
  static_assert(BFloat16(-2.0f).bits == 0xC000);
  static_assert(Float8E4M3FN(448.0f).bits == 0x7E);
  static_assert(float(Float8E5M2::from_bits(0x7B)) == 57344.0f);
  static_assert(float(Half::from_bits(0x0001)) == 0x1p-24f);
  EXPECT_EQ(Half(0.1f).bits, float_to_float16_bits(0.1f));
  EXPECT_EQ(float(BFloat16::from_bits(0x3DCD)), bfloat16_bits_to_float(0x3DCD));
  EXPECT_TRUE(std::isnan(float(Float8E4M3FN::from_bits(0x7F))));
  EXPECT_EQ(Float8E5M2(-1.0f).bits, 0xBC);
}

// ---- load_as_double / store_from_double ----

template <typename T>
T stored(DType dtype, double value) {
  EXPECT_EQ(dtype_size(dtype), sizeof(T));
  T element{};
  store_from_double(dtype, value, &element);
  return element;
}

TEST(ElementAccess, IntegersTruncateTowardZeroAndWrapLikePyTorchOnX86) {
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, 2.9), 2);
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, -2.9), -2);
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, 2147483647.9), 2147483647);
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, -2147483648.9), INT32_MIN);
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, 2147483648.0), INT32_MIN);
  EXPECT_EQ(stored<std::int32_t>(DType::kInt32, NAN), INT32_MIN);
  EXPECT_EQ(stored<std::int64_t>(DType::kInt64, -0x1p62), -(std::int64_t{1} << 62));
  EXPECT_EQ(stored<std::int64_t>(DType::kInt64, 0x1p63), INT64_MIN);
  EXPECT_EQ(stored<std::int64_t>(DType::kInt64, -INFINITY), INT64_MIN);
  EXPECT_EQ(stored<std::int8_t>(DType::kInt8, -128.7), -128);
  EXPECT_EQ(stored<std::int8_t>(DType::kInt8, 300.0), 44);  // wraps the int32 result
  EXPECT_EQ(stored<std::int8_t>(DType::kInt8, 1e10), 0);    // int32 indefinite, low byte
  EXPECT_EQ(stored<std::int16_t>(DType::kInt16, 40000.5), -25536);
  EXPECT_EQ(stored<std::uint8_t>(DType::kUInt8, -1.5), 255);  // through int64
  EXPECT_EQ(stored<std::uint8_t>(DType::kUInt8, 256.0), 0);
  EXPECT_EQ(stored<std::uint8_t>(DType::kUInt8, 255.99), 255);
}

TEST(ElementAccess, BoolIsNonZeroAndReadsAsZeroOrOne) {
  EXPECT_EQ(stored<std::uint8_t>(DType::kBool, 0.0), 0);
  EXPECT_EQ(stored<std::uint8_t>(DType::kBool, -0.0), 0);
  EXPECT_EQ(stored<std::uint8_t>(DType::kBool, 1e-300), 1);
  EXPECT_EQ(stored<std::uint8_t>(DType::kBool, NAN), 1);
  EXPECT_EQ(stored<std::uint8_t>(DType::kBool, -3.0), 1);
  const std::uint8_t odd_true = 7;
  EXPECT_EQ(load_as_double(DType::kBool, &odd_true), 1.0);
}

TEST(ElementAccess, FloatsFollowTheNarrowConversions) {
  const double samples[] = {0.1, -1e-6, 65519.0, 3.0e38, 1e39, 464.0, 1.0 + 0x1p-11 + 0x1p-40};
  for (double x : samples) {
    EXPECT_EQ(stored<std::uint16_t>(DType::kFloat16, x), double_to_float16_bits(x)) << x;
    EXPECT_EQ(stored<std::uint16_t>(DType::kBFloat16, x), double_to_bfloat16_bits(x)) << x;
    EXPECT_EQ(stored<std::uint8_t>(DType::kFloat8E4M3FN, x), double_to_float8_e4m3fn_bits(x)) << x;
    EXPECT_EQ(stored<std::uint8_t>(DType::kFloat8E5M2, x), double_to_float8_e5m2_bits(x)) << x;
    EXPECT_EQ(stored<float>(DType::kFloat32, x), static_cast<float>(x)) << x;
    EXPECT_EQ(stored<double>(DType::kFloat64, x), x) << x;
  }
  const std::uint16_t half_subnormal = 0x0001;
  EXPECT_EQ(load_as_double(DType::kFloat16, &half_subnormal), 0x1p-24);
  const std::uint16_t bfloat16_max = 0x7F7F;
  EXPECT_EQ(load_as_double(DType::kBFloat16, &bfloat16_max), 0x1.FEp127);
  const std::uint8_t e4m3fn_min = 0xFE;
  EXPECT_EQ(load_as_double(DType::kFloat8E4M3FN, &e4m3fn_min), -448.0);
  const std::uint8_t e5m2_inf = 0xFC;
  EXPECT_EQ(load_as_double(DType::kFloat8E5M2, &e5m2_inf), -INFINITY);
}

TEST(ElementAccess, EveryDTypeRoundTripsRepresentableValuesAtAnyAlignment) {
  const double values[] = {0.0, 1.0, -1.0, 96.0, -96.0, 0.5, -0.25};
  unsigned char buffer[16] = {};
  for (int index = 0; index < kNumDTypes; ++index) {
    const auto dtype = static_cast<DType>(index);
    for (double value : values) {
      double expected = value;
      if (dtype == DType::kBool) expected = value != 0.0 ? 1.0 : 0.0;
      if (dtype_category(dtype) == DTypeCategory::kInt) expected = std::trunc(value);
      if (dtype == DType::kUInt8 && expected < 0) expected += 256.0;
      store_from_double(dtype, value, buffer + 1);
      EXPECT_EQ(load_as_double(dtype, buffer + 1), expected) << dtype_name(dtype) << " " << value;
    }
  }
  const std::int64_t big = (std::int64_t{1} << 53) + 1;  // rounds to even when read as double
  EXPECT_EQ(load_as_double(DType::kInt64, &big), 0x1p53);
}

}  // namespace
}  // namespace tileops
