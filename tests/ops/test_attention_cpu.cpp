// The CPU ALiBi kernel against the slopes of the float64 reference (references/attention.hpp),
// checked exactly in float32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attention.hpp"
#include "cpu_numerics.hpp"
#include "kernels/attention/cpu/attention_cpu.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

// The kernel's documented float32 result: the slope rounded to float, times (j - i) in float.
float expected_value(double slope, std::int64_t i, std::int64_t j) {
  return static_cast<float>(slope) * static_cast<float>(j - i);
}

TEST(AttentionCpu, AlibiSlopesForPowerOfTwoAndOtherHeadCounts) {
  // 8 heads: 2^-1 .. 2^-8, exact. 12 heads: those, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
  for (std::int64_t h = 0; h < 8; ++h) {
    EXPECT_EQ(k::alibi_slope(8, h), std::ldexp(1.0f, -static_cast<int>(h + 1))) << h;
    EXPECT_EQ(k::alibi_slope(12, h), std::ldexp(1.0f, -static_cast<int>(h + 1))) << h;
  }
  EXPECT_EQ(k::alibi_slope(12, 8), 0.70710677f);
  EXPECT_EQ(k::alibi_slope(12, 9), 0.35355338f);
  EXPECT_EQ(k::alibi_slope(12, 10), 0.17677669f);
  EXPECT_EQ(k::alibi_slope(12, 11), 0.088388346f);
  for (std::int64_t heads : {1, 2, 3, 5, 8, 12, 32, 112}) {
    const std::vector<double> slopes = references::alibi_slopes(heads);
    for (std::int64_t h = 0; h < heads; ++h) {
      EXPECT_EQ(k::alibi_slope(heads, h), static_cast<float>(slopes[h])) << heads << " " << h;
    }
  }
}

TEST(AttentionCpu, AlibiFloat32ValuesAreExact) {
  for (std::int64_t heads : {8, 12, 112}) {
    const std::int64_t seq = 33;
    Tensor out = poisoned_tensor({heads, seq, seq}, DType::kFloat32);
    k::alibi(heads, seq, out);
    const std::vector<double> slopes = references::alibi_slopes(heads);
    const float* values = out.data<const float>();
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < seq; ++i) {
        for (std::int64_t j = 0; j < seq; ++j) {
          ASSERT_EQ(values[(h * seq + i) * seq + j], expected_value(slopes[h], i, j))
              << heads << " heads, (" << h << ", " << i << ", " << j << ")";
        }
      }
    }
  }
  // A few values by hand: 8 heads, head 2 has slope 1/8; 12 heads, head 8 has slope 2^-0.5.
  Tensor out8 = poisoned_tensor({8, 5, 5}, DType::kFloat32);
  k::alibi(8, 5, out8);
  EXPECT_EQ(out8.data<float>()[(2 * 5 + 4) * 5 + 1], -0.375f);  // (1 - 4) / 8
  EXPECT_EQ(out8.data<float>()[(2 * 5 + 1) * 5 + 4], 0.375f);
  EXPECT_EQ(out8.data<float>()[(7 * 5 + 3) * 5 + 3], 0.0f);
  Tensor out12 = poisoned_tensor({12, 5, 5}, DType::kFloat32);
  k::alibi(12, 5, out12);
  EXPECT_EQ(out12.data<float>()[(8 * 5 + 4) * 5 + 0], 0.70710677f * -4.0f);
}

TEST(AttentionCpu, AlibiNarrowDTypesRoundTheFloat32Value) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const std::int64_t heads = 12;
    const std::int64_t seq = 40;
    Tensor out = poisoned_tensor({heads, seq, seq}, dtype);
    k::alibi(heads, seq, out);
    const std::vector<double> slopes = references::alibi_slopes(heads);
    std::vector<double> want;
    Tensor rounded = Tensor::empty({1}, dtype);
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < seq; ++i) {
        for (std::int64_t j = 0; j < seq; ++j) {
          store_from_double(dtype, expected_value(slopes[h], i, j), rounded.data_ptr());
          want.push_back(load_as_double(dtype, rounded.data_ptr()));
        }
      }
    }
    EXPECT_TRUE(all_close(to_doubles(out), want, {0.0, 0.0})) << dtype_name(dtype);
  }
}

TEST(AttentionCpu, AlibiEmptySequence) {
  const Tensor guard = poisoned_tensor({64}, DType::kFloat32);
  Tensor out = empty_view(guard, {4, 0, 0});
  EXPECT_NO_THROW(k::alibi(4, 0, out));
  EXPECT_TRUE(still_poisoned(guard));
}

}  // namespace
}  // namespace tileops::test_cpu
