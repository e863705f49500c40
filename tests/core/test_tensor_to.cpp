// Tensor::to (device and dtype conversion) and zero-byte tensors on devices without an allocator.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/test_helpers.hpp"
#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops {
namespace {

using test_common::error_of;

Tensor float32_tensor(const std::vector<float>& values) {
  Tensor t = Tensor::empty(Shape{static_cast<std::int64_t>(values.size())}, DType::kFloat32);
  std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<std::uint16_t> bits16(const Tensor& t) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(t.numel()));
  std::memcpy(out.data(), t.data_ptr(), out.size() * 2);
  return out;
}

TEST(TensorTo, Float32ToFloat16RoundsToNearestEven) {
  // IEEE half: 1.0 = 0x3C00; 0.1f -> 0x2E66 (0.0999755859375); 65520 rounds up to +inf = 0x7C00;
  // 2^-25 is half the smallest subnormal and ties to even, 0; -2.5 = 0xC100; 1 + 2^-11 ties to 1.0.
  Tensor half = float32_tensor({1.0f, 0.1f, 65520.0f, 0x1p-25f, -2.5f, 1.0f + 0x1p-11f})
                    .to(Device::cpu(), DType::kFloat16);
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_EQ(bits16(half),
            (std::vector<std::uint16_t>{0x3C00, 0x2E66, 0x7C00, 0x0000, 0xC100, 0x3C00}));
}

TEST(TensorTo, Float32ToBFloat16RoundsToNearestEven) {
  // bfloat16 keeps float32's top 16 bits, rounded: 1 + 2^-8 ties to 1.0 (0x3F80); 1 + 3 * 2^-9
  // rounds up to 1 + 2^-7 (0x3F81); -0.0 stays negative (0x8000).
  Tensor bf = float32_tensor({1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-9f, -0.0f})
                  .to(Device::cpu(), DType::kBFloat16);
  EXPECT_EQ(bits16(bf), (std::vector<std::uint16_t>{0x3F80, 0x3F81, 0x8000}));
}

TEST(TensorTo, StridedSourceGivesAContiguousCopy) {
  Tensor base = float32_tensor({0, 1, 2, 3, 4, 5});
  Tensor column = base.as_strided(Shape{3}, Shape{2}, 0);  // 0, 2, 4
  ASSERT_FALSE(column.is_contiguous());
  Tensor wide = column.to(Device::cpu(), DType::kFloat64);
  ASSERT_TRUE(wide.is_contiguous());
  std::vector<double> got(3);
  std::memcpy(got.data(), wide.data_ptr(), sizeof(double) * 3);
  EXPECT_EQ(got, (std::vector<double>{0, 2, 4}));
}

TEST(TensorTo, SameDeviceAndDtypeIsTheSameTensor) {
  Tensor t = float32_tensor({1, 2});
  Tensor same = t.to(Device::cpu(), DType::kFloat32);
  EXPECT_EQ(same.storage(), t.storage());
}

TEST(TensorTo, MetaTargetAndMetaSource) {
  Tensor t = float32_tensor({1, 2});
  Tensor m = t.to(Device::meta(), DType::kBFloat16);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.dtype(), DType::kBFloat16);
  EXPECT_EQ(m.shape(), Shape{2});
  EXPECT_EQ(error_of<CheckError>([&] { m.to(Device::cpu(), DType::kFloat32); }),
            "Tensor::to: a meta tensor has no values to copy to cpu");
}

// Without a CUDA runtime (a CPU-only build, or no GPU): tests/cuda covers the copies where there
// is.
TEST(TensorTo, OtherDevicesAreNotAvailableWithoutTheirRuntime) {
  if (allocator_for(DeviceType::kCUDA)) GTEST_SKIP() << "a CUDA runtime is present";
  float host[2] = {1, 2};
  Tensor on_cuda = Tensor::from_blob(host, Shape{2}, Shape{1}, DType::kFloat32, Device::cuda(0));
  EXPECT_EQ(
      error_of<OpNotAvailableError>([&] { on_cuda.to(Device::cpu(), DType::kFloat32); }),
      "Tensor::to: copying from cuda:0 to cpu is not available; only CPU tensors can be copied");
  EXPECT_EQ(
      error_of<OpNotAvailableError>(
          [&] { float32_tensor({1}).to(Device::cuda(0), DType::kFloat32); }),
      "Tensor::to: copying from cpu to cuda:0 is not available; only CPU tensors can be copied");
}

TEST(TensorEmpty, ZeroBytesNeedNoAllocator) {
  if (allocator_for(DeviceType::kCUDA)) GTEST_SKIP() << "a CUDA runtime is present";
  // No CUDA allocator is installed in the core tests: an empty tensor still can be made there.
  Tensor t = Tensor::empty(Shape{0, 4}, DType::kFloat32, Device::cuda(0));
  EXPECT_EQ(t.device(), Device::cuda(0));
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_EQ(error_of<OpNotAvailableError>(
                [] { Tensor::empty(Shape{2}, DType::kFloat32, Device::cuda(0)); }),
            "Tensor::empty: no allocator is installed for cuda:0 (install one with set_allocator)");
}

}  // namespace
}  // namespace tileops
