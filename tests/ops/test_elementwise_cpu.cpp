// Numerics of the CPU elementwise kernels against the float64 references (references/
// elementwise.hpp) and exact integer arithmetic written here (tolerances: Note [CPU kernel
// tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/test_helpers.hpp"
#include "cpu_numerics.hpp"
#include "elementwise.hpp"
#include "kernels/elementwise/cpu/elementwise_cpu.hpp"
#include "tileops/core/error.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

using test_common::broadcast_shape;

// PyTorch broadcasting, written out: for an output element the flat index of the input element it
// reads.
std::int64_t source_index(std::int64_t flat, const Shape& out, const Shape& in) {
  std::int64_t index = 0;
  std::int64_t stride = 1;
  for (std::size_t k = out.size(); k-- > 0;) {
    const std::int64_t coord = flat % out[k];
    flat /= out[k];
    const std::size_t lead = out.size() - in.size();
    if (k < lead) continue;
    const std::int64_t size = in[k - lead];
    if (size != 1) index += coord * stride;
    stride *= size;
  }
  return index;
}

const std::vector<std::pair<Shape, Shape>>& broadcast_cases() {
  static const std::vector<std::pair<Shape, Shape>> cases = {
      {{64, 256}, {256}},           // bias add, [2048, 4096] + [4096] scaled down
      {{2, 16, 7, 7}, {16, 1, 1}},  // CNN feature map + per-channel term
      {{33}, {1}},                  // scalar-like
      {{1}, {33}},
      {{5, 1}, {1, 7}},  // both sides broadcast
      {{}, {3}},         // rank 0
      {{}, {}},
      {{4097}, {4097}},  // same shape, long odd row
      {{3, 4097}, {3, 1}},
      {{0, 3}, {3}},  // empty
      {{3, 0}, {1}},
  };
  return cases;
}

enum class BinaryOp { kAdd, kMul };

void check_float(BinaryOp op, const Shape& as, const Shape& bs, DType dtype, double alpha,
                 std::uint32_t seed) {
  SCOPED_TRACE(std::string(op == BinaryOp::kAdd ? "add " : "mul ") + case_name(dtype, as) +
               " with " + bs.str() + " alpha " + std::to_string(alpha));
  const Tensor a = random_tensor(as, dtype, seed);
  const Tensor b = random_tensor(bs, dtype, seed + 1);
  const Shape os = broadcast_shape(as, bs);
  Tensor out = poisoned_tensor(os, dtype);
  if (op == BinaryOp::kAdd) {
    k::add(a, b, Value(alpha), out);
  } else {
    k::mul(a, b, out);
  }
  // a + alpha * b rounds alpha * b in float32 before the add, an error of the size of the
  // terms, not of the (possibly cancelling) result.
  std::vector<double> atol;
  const std::vector<double> want = references::broadcast_binary(
      to_doubles(a), as, to_doubles(b), bs,
      [&](double x, double y) { return op == BinaryOp::kAdd ? x + alpha * y : x * y; },
      [&](double x, double y) {
        return op == BinaryOp::kAdd ? 2e-7 * (std::abs(x) + std::abs(alpha * y)) : 0.0;
      },
      &atol);
  EXPECT_TRUE(all_close(to_doubles(out), want, tolerance_for(dtype), atol));
}

TEST(ElementwiseCpu, AddFloatBroadcasts) {
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    for (const auto& [as, bs] : broadcast_cases()) {
      for (double alpha : {1.0, 0.5, -2.0})
        check_float(BinaryOp::kAdd, as, bs, dtype, alpha, seed++);
    }
  }
}

TEST(ElementwiseCpu, AddFloatTakesAnIntAlpha) {
  const Tensor a = random_tensor({7}, DType::kBFloat16, 3);
  const Tensor b = random_tensor({7}, DType::kBFloat16, 4);
  Tensor with_int = poisoned_tensor({7}, DType::kBFloat16);
  Tensor with_float = poisoned_tensor({7}, DType::kBFloat16);
  k::add(a, b, Value(3), with_int);
  k::add(a, b, Value(3.0), with_float);
  EXPECT_TRUE(all_close(to_doubles(with_int), to_doubles(with_float), {0.0, 0.0}));
}

TEST(ElementwiseCpu, MulFloatBroadcasts) {
  std::uint32_t seed = 500;
  for (DType dtype : kFloatDTypes) {
    for (const auto& [as, bs] : broadcast_cases())
      check_float(BinaryOp::kMul, as, bs, dtype, 1.0, seed++);
  }
}

// Integers: values over the whole int32 range, so sums and products wrap; the oracle computes
// exactly in int64 (|a + 3 b| < 2^34) or unsigned 64-bit (products) and wraps to 32 bits.
template <class I>
Tensor int_tensor(const Shape& shape, DType dtype, std::uint32_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int32_t>::max());
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<I>()[i] = static_cast<I>(dist(rng));
  return t;
}

std::int32_t wrap32(std::int64_t v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}

TEST(ElementwiseCpu, Int32AddAndMulWrap) {
  std::uint32_t seed = 900;
  for (const auto& [as, bs] : broadcast_cases()) {
    SCOPED_TRACE(as.str() + " with " + bs.str());
    const Tensor a = int_tensor<std::int32_t>(as, DType::kInt32, seed++);
    const Tensor b = int_tensor<std::int32_t>(bs, DType::kInt32, seed++);
    const Shape os = broadcast_shape(as, bs);
    Tensor sum = poisoned_tensor(os, DType::kInt32);
    Tensor product = poisoned_tensor(os, DType::kInt32);
    k::add(a, b, Value(3), sum);
    k::mul(a, b, product);
    for (std::int64_t e = 0; e < os.numel(); ++e) {
      const std::int64_t x = a.data<std::int32_t>()[source_index(e, os, as)];
      const std::int64_t y = b.data<std::int32_t>()[source_index(e, os, bs)];
      ASSERT_EQ(sum.data<std::int32_t>()[e], wrap32(x + 3 * y)) << "element " << e;
      const std::uint64_t wide = static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y);
      ASSERT_EQ(product.data<std::int32_t>()[e], wrap32(static_cast<std::int64_t>(wide)))
          << "element " << e;
    }
  }
}

TEST(ElementwiseCpu, Int64AddAndMul) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  Tensor a = Tensor::empty({5}, DType::kInt64);
  Tensor b = Tensor::empty({5}, DType::kInt64);
  const std::int64_t as[] = {kMax, 5, -7, std::int64_t{1} << 40, 0};
  const std::int64_t bs[] = {1, std::int64_t{1} << 62, 3, 1 << 20, -9};
  std::copy(std::begin(as), std::end(as), a.data<std::int64_t>());
  std::copy(std::begin(bs), std::end(bs), b.data<std::int64_t>());
  Tensor sum = poisoned_tensor({5}, DType::kInt64);
  Tensor product = poisoned_tensor({5}, DType::kInt64);
  k::add(a, b, Value(std::int64_t{2}), sum);
  k::mul(a, b, product);
  // Hand-computed: kMax + 2 and 5 + 2 * 2^62 = 5 + 2^63 wrap to kMin + 1 and kMin + 5;
  // 5 * 2^62 = 2^64 + 2^62 wraps to 2^62; the rest are exact.
  const std::int64_t want_sum[] = {kMin + 1, kMin + 5, -1, (std::int64_t{1} << 40) + (1 << 21),
                                   -18};
  const std::int64_t want_product[] = {kMax, std::int64_t{1} << 62, -21, std::int64_t{1} << 60, 0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sum.data<std::int64_t>()[i], want_sum[i]) << i;
    EXPECT_EQ(product.data<std::int64_t>()[i], want_product[i]) << i;
  }
}

TEST(ElementwiseCpu, IntAddRejectsFloatAlpha) {
  const Tensor a = Tensor::empty({2}, DType::kInt32);
  Tensor out = Tensor::empty({2}, DType::kInt32);
  EXPECT_EQ(test_common::error_of<CheckError>([&] { k::add(a, a, Value(0.5), out); }),
            "add(cpu): alpha = 0.5 is not an int; an int32 input takes an int alpha");
}

}  // namespace
}  // namespace tileops::test_cpu
