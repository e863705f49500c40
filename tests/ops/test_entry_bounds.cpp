// Call specs hold only what selects or builds a kernel (Note [Call spec fields]): serving many
// shapes must not grow the insert-only call-spec tables or the built entries. Each op here is
// called with over 10,000 distinct shapes; both caches stay bounded by the keys that matter.
#include <gtest/gtest.h>

#include <bit>
#include <set>
#include <string>

#include "tileops/op/dispatch.hpp"
#include "tileops/ops/activation.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/norm.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {
namespace {

// 22^3 = 10,648 distinct shapes [a, b, c], each small, so the whole sweep stays cheap.
constexpr int kSide = 22;

Tensor ones(const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::kFloat32);
  auto* p = static_cast<float*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = 1.0f;
  return t;
}

template <class F>
void for_each_shape(F&& f) {
  for (int a = 1; a <= kSide; ++a)
    for (int b = 1; b <= kSide; ++b)
      for (int c = 1; c <= kSide; ++c) f(a, b, c);
}

TEST(EntryBounds, AddOverTenThousandShapesKeepsOneKeyPerBroadcastKind) {
  AddFwdOp add;
  for_each_shape([&](int a, int b, int c) {
    add(ones({a, b, c}), ones({a, b, c}));  // same shapes
    add(ones({a, b, c}), ones({c}));        // broadcast
  });
  // dtype x broadcast: the element counts key nothing.
  EXPECT_EQ(add.cached_call_specs("add"), 2u);
  EXPECT_EQ(add.built_entries("add").size(), 2u);
}

TEST(EntryBounds, SoftmaxOverTenThousandShapesKeepsOneKeyPerLengthBucket) {
  SoftmaxFwdOp softmax;
  for_each_shape([&](int a, int b, int c) { softmax(ones({a, b, c})); });
  // Row lengths 1..22 fall in the buckets bit_width(1) = 1 .. bit_width(22) = 5.
  const auto buckets = static_cast<std::size_t>(std::bit_width(unsigned{kSide}));
  EXPECT_EQ(softmax.cached_call_specs("softmax"), buckets);
  EXPECT_EQ(softmax.built_entries("softmax").size(), buckets);
}

TEST(EntryBounds, SumOverTenThousandShapesKeepsOneKeyPerReducedAxes) {
  SumFwdOp sum(Shape{-1});
  for_each_shape([&](int a, int b, int c) { sum(ones({a, b, c})); });
  EXPECT_EQ(sum.cached_call_specs("sum"), 1u);
  EXPECT_EQ(sum.built_entries("sum").size(), 1u);
}

TEST(EntryBounds, RMSNormOverTenThousandBatchShapesKeepsOneKeyPerRowLength) {
  RMSNormFwdOp norm({4});
  for_each_shape([&](int a, int b, int c) { norm(ones({a, b, c, 4})); });
  EXPECT_EQ(norm.cached_call_specs("rms_norm"), 1u);
  EXPECT_EQ(norm.built_entries("rms_norm").size(), 1u);
}

TEST(EntryBounds, GatedActivationOverTenThousandShapesKeepsOneKey) {
  SiluAndMulFwdOp op;
  for_each_shape([&](int a, int b, int c) { op(ones({a, b, 2 * c})); });
  EXPECT_EQ(op.cached_call_specs("silu_and_mul"), 1u);
  EXPECT_EQ(op.built_entries("silu_and_mul").size(), 1u);
}

TEST(EntryBounds, GemmOnTheGpuKeysMByItsPowerOfTwoClass) {
  // The call specs a GPU would key GemmFwdOp by, for every M from 1 to 10,000 against one weight
  // shape, stated without a GPU (explain_call on meta tensors): M keys by its power-of-two class,
  // capped at 2^14 (Note [GEMM shape classes]), so 15 call specs, not 10,000.
  GemmFwdOp gemm;
  std::set<std::string> calls;
  for (std::int64_t m = 1; m <= 10000; ++m) {
    const std::optional<Tensor> inputs[] = {Tensor::meta({m, 4096}, DType::kBFloat16),
                                            Tensor::meta({4096, 6144}, DType::kBFloat16),
                                            std::nullopt};
    for (const DispatchEvent& event :
         gemm.explain_call(inputs, Device::cuda(0), DeviceFacts{90, 132, 0}))
      calls.insert(event.call);
  }
  EXPECT_EQ(calls.size(), 15u);  // 1, 2, 4, ..., 8192 and 16384
  EXPECT_TRUE(gemm.built_entries("gemm").empty());
}

}  // namespace
}  // namespace tileops
