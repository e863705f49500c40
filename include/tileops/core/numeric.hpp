// Host conversions between float32/float64 and the narrow float types (float16, bfloat16,
// float8_e4m3fn, float8_e5m2) that reproduce PyTorch's casts bit for bit, plus the generic
// per-element load/store that CPU kernels and tests use for every DType.
//
// Note [Narrow float casts]
// Encoding rounds to nearest, ties to even, with integer arithmetic only, so the result does
// not depend on the host's rounding mode or on flush-to-zero settings. Special values follow
// PyTorch's portable scalar conversions, which are the reference here:
//   float16        NaN -> 0x7E00 with the input's sign; overflow -> Inf.
//   bfloat16       NaN -> 0x7FC0, the sign dropped; overflow -> Inf.
//   float8_e4m3fn  no Inf: NaN, Inf and every |x| > 464 (above the midpoint past 448) -> 0x7F
//                  with the input's sign; |x| == 464 ties to even, i.e. to 448.
//   float8_e5m2    NaN -> 0x7F with sign; Inf and every |x| >= 61440 (the midpoint past 57344,
//                  whose tie goes to the even encoding, Inf) -> 0x7C with sign.
// Decoding is exact; NaN payloads are reproduced as PyTorch produces them: float16 and
// float8_e5m2 NaNs come back quiet (bit 22 set) with their payload shifted up, bfloat16 keeps
// its bits (bits << 16), float8_e4m3fn's NaN decodes to 0x7FF00000 with sign.
// A float64 source is first rounded to float32 and then to the narrow type (double rounding),
// because PyTorch's narrow types are constructed only from float: a double argument is
// converted to float before the constructor runs. docs/dtypes.md has the details.
#pragma once

#include <bit>
#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops {

namespace numeric_detail {

inline constexpr std::uint32_t kFloatSignBit = 0x80000000u;
inline constexpr std::uint32_t kFloatInfBits = 0x7F800000u;
inline constexpr int kFloatMantissaBits = 23;
inline constexpr int kFloatBias = 127;

// Shifts right by `shift` (1..31) and rounds the dropped bits to nearest, ties to even.
constexpr std::uint32_t shift_right_round_even(std::uint32_t value, int shift) noexcept {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t dropped = value & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  const bool round_up = dropped > half || (dropped == half && (kept & 1u) != 0);
  return kept + (round_up ? 1u : 0u);
}

// Rounds the magnitude of a finite float (sign bit clear) to a binary format with
// kMantissaBits stored mantissa bits and exponent bias kBias. Returns the magnitude encoding;
// values past the largest finite encoding carry into the all-ones exponent and beyond, which
// each caller maps to its format's Inf or NaN.
template <int kMantissaBits, int kBias>
constexpr std::uint32_t round_float_magnitude(std::uint32_t magnitude) noexcept {
  const int float_exponent = static_cast<int>(magnitude >> kFloatMantissaBits);
  const std::uint32_t mantissa = magnitude & ((1u << kFloatMantissaBits) - 1u);
  // A float subnormal has exponent 1 and no implicit bit.
  const bool float_subnormal = float_exponent == 0;
  const std::uint32_t significand =
      float_subnormal ? mantissa : (mantissa | (1u << kFloatMantissaBits));
  const int narrow_exponent = (float_subnormal ? 1 : float_exponent) - kFloatBias + kBias;
  constexpr int kDroppedBits = kFloatMantissaBits - kMantissaBits;
  if (narrow_exponent >= 1) {
    // Adding the significand (implicit bit included) to exponent-1 yields exponent|mantissa, and
    // a rounding carry out of the mantissa moves into the exponent as it should.
    const std::uint32_t unrounded =
        (static_cast<std::uint32_t>(narrow_exponent - 1) << kFloatMantissaBits) + significand;
    return shift_right_round_even(unrounded, kDroppedBits);
  }
  // Subnormal in the narrow format: each step below exponent 1 halves the significand once more.
  const int shift = kDroppedBits + 1 - narrow_exponent;
  return shift_right_round_even(significand, shift > 31 ? 31 : shift);
}

// Exact float bits of a finite, non-special narrow magnitude (exponent field below all-ones
// for IEEE-like formats).
template <int kMantissaBits, int kBias>
constexpr std::uint32_t decode_finite_magnitude(std::uint32_t magnitude) noexcept {
  const std::uint32_t exponent = magnitude >> kMantissaBits;
  const std::uint32_t mantissa = magnitude & ((1u << kMantissaBits) - 1u);
  constexpr int kWiden = kFloatMantissaBits - kMantissaBits;
  if (exponent != 0) {
    return ((exponent + (kFloatBias - kBias)) << kFloatMantissaBits) | (mantissa << kWiden);
  }
  if (mantissa == 0) return 0;
  // Subnormal: mantissa * 2^(1 - kBias - kMantissaBits), normal in float after renormalising.
  const int top_bit = 31 - std::countl_zero(mantissa);
  const std::uint32_t float_exponent =
      static_cast<std::uint32_t>(top_bit + 1 - kBias - kMantissaBits + kFloatBias);
  const std::uint32_t float_mantissa =
      (mantissa << (kFloatMantissaBits - top_bit)) & ((1u << kFloatMantissaBits) - 1u);
  return (float_exponent << kFloatMantissaBits) | float_mantissa;
}

}  // namespace numeric_detail

constexpr std::uint32_t float_to_bits(float value) noexcept {
  return std::bit_cast<std::uint32_t>(value);
}
constexpr float float_from_bits(std::uint32_t bits) noexcept { return std::bit_cast<float>(bits); }

// ---- float16 (1 sign, 5 exponent, 10 mantissa bits, bias 15) ----

constexpr float float16_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t magnitude = bits & 0x7FFFu;
  if (magnitude >= 0x7C00u) {
    const std::uint32_t payload = (magnitude & 0x3FFu) << 13;
    // Widening quiets a signalling NaN, as the hardware and PyTorch's portable path both do.
    const std::uint32_t quiet = payload != 0 ? 0x00400000u : 0u;
    return float_from_bits(sign | numeric_detail::kFloatInfBits | quiet | payload);
  }
  return float_from_bits(sign | numeric_detail::decode_finite_magnitude<10, 15>(magnitude));
}

constexpr std::uint16_t float_to_float16_bits(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & ~numeric_detail::kFloatSignBit;
  if (magnitude > numeric_detail::kFloatInfBits) return sign | 0x7E00u;
  const std::uint32_t rounded = magnitude == numeric_detail::kFloatInfBits
                                    ? 0x7C00u
                                    : numeric_detail::round_float_magnitude<10, 15>(magnitude);
  return static_cast<std::uint16_t>(sign | (rounded > 0x7C00u ? 0x7C00u : rounded));
}

// ---- bfloat16 (1 sign, 8 exponent, 7 mantissa bits: the top half of a float) ----

constexpr float bfloat16_bits_to_float(std::uint16_t bits) noexcept {
  return float_from_bits(static_cast<std::uint32_t>(bits) << 16);
}

constexpr std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  // PyTorch drops the sign of NaN here (unlike float16 and fp8).
  if ((bits & ~numeric_detail::kFloatSignBit) > numeric_detail::kFloatInfBits) return 0x7FC0u;
  // Same exponent range as float, so rounding the low 16 bits is the whole job; a carry out of
  // the largest finite value lands exactly on Inf.
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

// ---- float8_e4m3fn (1 sign, 4 exponent, 3 mantissa bits, bias 7; no Inf, NaN = S.1111.111) ----

constexpr float float8_e4m3fn_bits_to_float(std::uint8_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
  const std::uint32_t magnitude = bits & 0x7Fu;
  if (magnitude == 0x7Fu) return float_from_bits(sign | 0x7FF00000u);
  return float_from_bits(sign | numeric_detail::decode_finite_magnitude<3, 7>(magnitude));
}

constexpr std::uint8_t float_to_float8_e4m3fn_bits(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & ~numeric_detail::kFloatSignBit;
  if (magnitude >= numeric_detail::kFloatInfBits) return sign | 0x7Fu;
  const std::uint32_t rounded = numeric_detail::round_float_magnitude<3, 7>(magnitude);
  return static_cast<std::uint8_t>(sign | (rounded > 0x7Fu ? 0x7Fu : rounded));
}

// Saturating variant for quantisation: finite overflow and Inf clamp to +-448, NaN stays NaN.
constexpr std::uint8_t float_to_float8_e4m3fn_bits_saturating(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & ~numeric_detail::kFloatSignBit;
  if (magnitude > numeric_detail::kFloatInfBits) return sign | 0x7Fu;
  if (magnitude == numeric_detail::kFloatInfBits) return sign | 0x7Eu;
  const std::uint32_t rounded = numeric_detail::round_float_magnitude<3, 7>(magnitude);
  return static_cast<std::uint8_t>(sign | (rounded > 0x7Eu ? 0x7Eu : rounded));
}

// ---- float8_e5m2 (1 sign, 5 exponent, 2 mantissa bits, bias 15: the top byte of a float16) ----

constexpr float float8_e5m2_bits_to_float(std::uint8_t bits) noexcept {
  return float16_bits_to_float(static_cast<std::uint16_t>(bits << 8));
}

constexpr std::uint8_t float_to_float8_e5m2_bits(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & ~numeric_detail::kFloatSignBit;
  if (magnitude > numeric_detail::kFloatInfBits) return sign | 0x7Fu;
  if (magnitude == numeric_detail::kFloatInfBits) return sign | 0x7Cu;
  const std::uint32_t rounded = numeric_detail::round_float_magnitude<2, 15>(magnitude);
  return static_cast<std::uint8_t>(sign | (rounded > 0x7Cu ? 0x7Cu : rounded));
}

// Saturating variant for quantisation: finite overflow and Inf clamp to +-57344, NaN stays NaN.
constexpr std::uint8_t float_to_float8_e5m2_bits_saturating(float value) noexcept {
  const std::uint32_t bits = float_to_bits(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & ~numeric_detail::kFloatSignBit;
  if (magnitude > numeric_detail::kFloatInfBits) return sign | 0x7Fu;
  if (magnitude == numeric_detail::kFloatInfBits) return sign | 0x7Bu;
  const std::uint32_t rounded = numeric_detail::round_float_magnitude<2, 15>(magnitude);
  return static_cast<std::uint8_t>(sign | (rounded > 0x7Bu ? 0x7Bu : rounded));
}

// ---- float64 sources: rounded to float first (see Note [Narrow float casts]) ----

constexpr std::uint16_t double_to_float16_bits(double value) noexcept {
  return float_to_float16_bits(static_cast<float>(value));
}
constexpr std::uint16_t double_to_bfloat16_bits(double value) noexcept {
  return float_to_bfloat16_bits(static_cast<float>(value));
}
constexpr std::uint8_t double_to_float8_e4m3fn_bits(double value) noexcept {
  return float_to_float8_e4m3fn_bits(static_cast<float>(value));
}
constexpr std::uint8_t double_to_float8_e5m2_bits(double value) noexcept {
  return float_to_float8_e5m2_bits(static_cast<float>(value));
}

// ---- Value types for CPU kernels: storage bits plus conversions through float ----

// A narrow float held as its storage bits, converted through float: `Bits` is the storage type,
// `kDecode`/`kEncode` the exact conversions above. One template for the four types, so they cannot
// drift apart.
template <class Bits, float (*kDecode)(Bits), Bits (*kEncode)(float)>
struct NarrowFloat {
  Bits bits;
  NarrowFloat() = default;
  constexpr explicit NarrowFloat(float value) noexcept : bits(kEncode(value)) {}
  static constexpr NarrowFloat from_bits(Bits raw) noexcept { return NarrowFloat(raw, FromBits{}); }
  constexpr operator float() const noexcept { return kDecode(bits); }

 private:
  struct FromBits {};
  constexpr NarrowFloat(Bits raw, FromBits) noexcept : bits(raw) {}
};

using Half = NarrowFloat<std::uint16_t, float16_bits_to_float, float_to_float16_bits>;
using BFloat16 = NarrowFloat<std::uint16_t, bfloat16_bits_to_float, float_to_bfloat16_bits>;
using Float8E4M3FN =
    NarrowFloat<std::uint8_t, float8_e4m3fn_bits_to_float, float_to_float8_e4m3fn_bits>;
using Float8E5M2 = NarrowFloat<std::uint8_t, float8_e5m2_bits_to_float, float_to_float8_e5m2_bits>;

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);
static_assert(sizeof(Float8E4M3FN) == 1 && sizeof(Float8E5M2) == 1);

// ---- Generic element access for every DType, with PyTorch's cast semantics ----

// Reads one element of `dtype` at `element` (any alignment) as a double. Exact for every dtype
// except int64 beyond 2^53, which rounds to nearest even. A bool byte reads as (byte != 0).
double load_as_double(DType dtype, const void* element) noexcept;

// Writes `value` as one element of `dtype` at `element` (any alignment), as PyTorch's cast from
// float64 does: floats round to nearest even (narrow floats via float32, see Note [Narrow
// float casts]); bool is (value != 0), so NaN is true; integers truncate toward zero.
// Out-of-range and NaN integer casts are undefined behaviour in C++; PyTorch keeps whatever the
// x86-64 instructions give, and so do we, deterministically: int32/int64 get their minimum
// value, int8/int16 wrap the int32 result, uint8 wraps the int64 result.
void store_from_double(DType dtype, double value, void* element) noexcept;

}  // namespace tileops
