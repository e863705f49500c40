// Tensor construction, views and their bounds, aliasing, contiguous copies; the allocator
// registry Tensor::empty draws from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops {
namespace {

template <class E>
std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

// A 2-D float32 CPU tensor holding 0, 1, 2, ... in row-major order.
Tensor iota(std::int64_t rows, std::int64_t cols) {
  Tensor t = Tensor::empty({rows, cols}, DType::kFloat32);
  std::iota(t.data<float>(), t.data<float>() + t.numel(), 0.0f);
  return t;
}

std::vector<float> elements(const Tensor& t) {
  const Tensor c = t.contiguous();
  return {c.data<float>(), c.data<float>() + c.numel()};
}

TEST(Tensor, UndefinedByDefault) {
  const Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_FALSE(t.shares_storage_with(t));
  EXPECT_EQ(error_of<CheckError>([&] { t.contiguous(); }),
            "Tensor::contiguous: the tensor is undefined");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({1}, {1}, 0); }),
            "Tensor::as_strided: the tensor is undefined");
}

TEST(Tensor, EmptyIsContiguousAndAligned) {
  const Tensor t = Tensor::empty({2, 3, 4}, DType::kBFloat16);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.shape(), Shape({2, 3, 4}));
  EXPECT_EQ(t.strides(), Shape({12, 4, 1}));
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.nbytes(), 48u);
  EXPECT_EQ(t.storage()->nbytes(), 48u);
  EXPECT_EQ(t.byte_offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.read_only());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % kCpuAlignment, 0u);
}

TEST(Tensor, EmptyWithNoElementsHasNoMemory) {
  const Tensor t = Tensor::empty({3, 0}, DType::kFloat32);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.shares_storage_with(t));
}

TEST(Tensor, EmptyRejectsBadShapes) {
  EXPECT_EQ(error_of<CheckError>([] {
              Tensor::empty({2, -1}, DType::kFloat32);
            }),
            "Tensor::empty: negative length -1 at axis 1 of shape [2, -1]");
  EXPECT_EQ(error_of<CheckError>([] {
              Tensor::empty({std::int64_t{1} << 62, 4}, DType::kFloat32);
            }),
            "Tensor::empty: shape [4611686018427387904, 4] holds more bytes than int64 can count");
}

TEST(Tensor, MetaHasGeometryButNoStorage) {
  const Tensor t = Tensor::meta({4, 5}, DType::kInt64);
  EXPECT_TRUE(t.is_meta());
  EXPECT_EQ(t.storage(), nullptr);
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_EQ(t.strides(), Shape({5, 1}));
  EXPECT_EQ(Tensor::empty({4, 5}, DType::kInt64, Device::meta()).storage(), nullptr);
  const Tensor transposed = t.as_strided({5, 4}, {1, 5}, 0);
  EXPECT_FALSE(transposed.is_contiguous());
  const Tensor copy = transposed.contiguous();
  EXPECT_TRUE(copy.is_meta());
  EXPECT_EQ(copy.strides(), Shape({4, 1}));
  EXPECT_FALSE(t.shares_storage_with(t));
  EXPECT_EQ(error_of<CheckError>([] { Tensor::meta({-3}, DType::kInt8); }),
            "Tensor::meta: negative length -3 at axis 0 of shape [-3]");
}

TEST(Tensor, FromBlobViewsCallerMemoryAndKeepsTheOwner) {
  auto owner =
      std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<std::int32_t>> watch = owner;
  Tensor t = Tensor::from_blob(owner->data(), {2, 3}, {3, 1}, DType::kInt32, Device::cpu(), owner,
                               /*read_only=*/true);
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(t.read_only());
  EXPECT_EQ(t.storage()->nbytes(), 24u);
  EXPECT_EQ(t.data<std::int32_t>()[4], 5);
  t = Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST(Tensor, FromBlobRejectsDataNotAlignedToItsElements) {
  alignas(8) std::byte bytes[32] = {};
  const std::string error = error_of<CheckError>(
      [&] { Tensor::from_blob(bytes + 2, {3}, {1}, DType::kFloat32, Device::cpu()); });
  EXPECT_THAT(error, ::testing::StartsWith("Tensor::from_blob: data at "));
  EXPECT_THAT(error, ::testing::EndsWith(" is not aligned to its 4-byte float32 elements"));
  // Aligned to the element is enough; an empty view reads nothing.
  EXPECT_EQ(Tensor::from_blob(bytes + 4, {3}, {1}, DType::kFloat32, Device::cpu()).numel(), 3);
  EXPECT_EQ(Tensor::from_blob(bytes + 2, {3}, {1}, DType::kFloat16, Device::cpu()).numel(), 3);
  EXPECT_EQ(Tensor::from_blob(bytes + 1, {0}, {1}, DType::kFloat32, Device::cpu()).numel(), 0);
}

TEST(Tensor, FromBlobRejectsMalformedViews) {
  float x[6] = {};
  EXPECT_EQ(error_of<CheckError>([&] {
              Tensor::from_blob(x, {2, 3}, {1}, DType::kFloat32, Device::cpu());
            }),
            "Tensor::from_blob: shape [2, 3] has rank 2 but strides [1] have rank 1");
  EXPECT_EQ(error_of<CheckError>([&] {
              Tensor::from_blob(x, {2, 3}, {-3, 1}, DType::kFloat32, Device::cpu());
            }),
            "Tensor::from_blob: negative stride -3 at axis 0 (negative strides are not "
            "supported)");
  EXPECT_EQ(error_of<CheckError>(
                [] { Tensor::from_blob(nullptr, {2}, {1}, DType::kFloat32, Device::cpu()); }),
            "Tensor::from_blob: null data for a view of shape [2]");
  EXPECT_EQ(error_of<CheckError>(
                [&] { Tensor::from_blob(x, {2}, {1}, DType::kFloat32, Device::meta()); }),
            "Tensor::from_blob: a meta tensor has no data; use Tensor::meta");
  EXPECT_EQ(error_of<CheckError>([&] {
              Tensor::from_blob(x, {std::int64_t{1} << 40, std::int64_t{1} << 40}, {0, 0},
                                DType::kFloat32, Device::cpu());
            }),
            "Tensor::from_blob: a view of shape [1099511627776, 1099511627776] with strides "
            "[0, 0] counts more elements than int64 can hold");
  const Tensor empty = Tensor::from_blob(nullptr, {0, 3}, {3, 1}, DType::kFloat32, Device::cpu());
  EXPECT_EQ(empty.numel(), 0);
}

TEST(Tensor, AsStridedViewsShareStorage) {
  const Tensor t = iota(4, 6);
  const Tensor row2 = t.as_strided({6}, {1}, 2 * 6 * 4);
  EXPECT_EQ(elements(row2), (std::vector<float>{12, 13, 14, 15, 16, 17}));
  EXPECT_EQ(row2.storage(), t.storage());
  EXPECT_EQ(row2.data_ptr(), t.data<float>() + 12);
  const Tensor column1 = t.as_strided({4}, {6}, 4);
  EXPECT_FALSE(column1.is_contiguous());
  EXPECT_EQ(elements(column1), (std::vector<float>{1, 7, 13, 19}));
  // The whole storage, exactly, is in bounds; one element more is not.
  EXPECT_NO_THROW(t.as_strided({24}, {1}, 0));
  EXPECT_NO_THROW(t.as_strided({0}, {1}, 96));
}

TEST(Tensor, AsStridedNeverReachesOutsideTheStorage) {
  const Tensor t = iota(4, 6);
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({25}, {1}, 0); }),
            "Tensor::as_strided: a view of shape [25] with strides [1] at byte offset 0 reaches "
            "outside the storage of 96 bytes");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({6}, {1}, 4 * 19); }),
            "Tensor::as_strided: a view of shape [6] with strides [1] at byte offset 76 reaches "
            "outside the storage of 96 bytes");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({0}, {1}, 100); }),
            "Tensor::as_strided: a view of shape [0] with strides [1] at byte offset 100 reaches "
            "outside the storage of 96 bytes");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({2}, {-1}, 8); }),
            "Tensor::as_strided: negative stride -1 at axis 0 (negative strides are not "
            "supported)");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({2}, {1}, 2); }),
            "Tensor::as_strided: byte offset 2 is not a non-negative multiple of the element "
            "size 4");
  EXPECT_EQ(error_of<CheckError>([&] { t.as_strided({2}, {1}, -4); }),
            "Tensor::as_strided: byte offset -4 is not a non-negative multiple of the element "
            "size 4");
  EXPECT_EQ(error_of<CheckError>(
                [&] { t.as_strided({3}, {std::numeric_limits<std::int64_t>::max() / 2}, 0); }),
            "Tensor::as_strided: a view of shape [3] with strides [4611686018427387903] spans "
            "more bytes than int64 can count");
  // A view of a view is bounded by the storage, not by the view it came from.
  const Tensor head = t.as_strided({2}, {1}, 0);
  EXPECT_NO_THROW(head.as_strided({24}, {1}, 0));
}

TEST(Tensor, IsContiguousIgnoresUnitAxes) {
  const Tensor t = iota(4, 6);
  EXPECT_TRUE(t.as_strided({1, 6}, {100, 1}, 0).is_contiguous());
  EXPECT_TRUE(t.as_strided({4, 1, 6}, {6, 7, 1}, 0).is_contiguous());
  EXPECT_FALSE(t.as_strided({2, 6}, {12, 1}, 0).is_contiguous());
  EXPECT_TRUE(t.as_strided({0, 6}, {12, 1}, 0).is_contiguous());
  EXPECT_TRUE(t.as_strided({}, {}, 8).is_contiguous());
}

TEST(Tensor, SharesStorageWhenByteRangesOverlap) {
  const Tensor t = iota(4, 6);
  const Tensor rows01 = t.as_strided({2, 6}, {6, 1}, 0);
  const Tensor rows12 = t.as_strided({2, 6}, {6, 1}, 6 * 4);
  const Tensor rows23 = t.as_strided({2, 6}, {6, 1}, 12 * 4);
  EXPECT_TRUE(rows01.shares_storage_with(rows12));
  EXPECT_TRUE(rows12.shares_storage_with(rows01));
  EXPECT_FALSE(rows01.shares_storage_with(rows23));  // adjacent, disjoint
  EXPECT_TRUE(t.shares_storage_with(rows23));
  EXPECT_FALSE(t.shares_storage_with(iota(4, 6)));
  EXPECT_FALSE(t.shares_storage_with(t.as_strided({0}, {1}, 8)));
  // Interleaved columns whose ranges overlap (Note [Disjoint bands]): bands of the same row step
  // that do not meet share nothing, those that meet share, and other interleavings count as
  // sharing, conservatively.
  const auto cols = [&](std::int64_t first, std::int64_t width, std::int64_t rows = 3) {
    return t.as_strided({rows, width}, {6, 1}, first * 4);
  };
  EXPECT_FALSE(t.as_strided({4}, {6}, 0).shares_storage_with(t.as_strided({4}, {6}, 4)));
  EXPECT_FALSE(cols(0, 2).shares_storage_with(cols(2, 4)));
  EXPECT_FALSE(cols(2, 4).shares_storage_with(cols(0, 2)));
  EXPECT_TRUE(cols(0, 3).shares_storage_with(cols(2, 3)));
  EXPECT_FALSE(cols(4, 2).shares_storage_with(cols(6, 2)));  // the next row's first columns
  EXPECT_TRUE(cols(4, 2).shares_storage_with(cols(5, 2)));   // column 5, and 6 wraps to a row
  EXPECT_TRUE(cols(0, 2).shares_storage_with(t.as_strided({2, 2}, {12, 1}, 8)));  // other step
  EXPECT_TRUE(t.as_strided({4}, {6}, 0).shares_storage_with(t.as_strided({8}, {3}, 0)));
  // Two storages over the same memory share it.
  const Tensor alias = Tensor::from_blob(t.data_ptr(), {24}, {1}, DType::kFloat32, Device::cpu());
  EXPECT_TRUE(alias.shares_storage_with(rows23));
}

TEST(Tensor, ContiguousCopiesStridedViews) {
  const Tensor t = iota(3, 4);
  EXPECT_EQ(t.contiguous().data_ptr(), t.data_ptr());  // already contiguous: no copy
  const Tensor transposed = t.as_strided({4, 3}, {1, 4}, 0);
  const Tensor copy = transposed.contiguous();
  EXPECT_TRUE(copy.is_contiguous());
  EXPECT_FALSE(copy.shares_storage_with(t));
  EXPECT_EQ(elements(transposed), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  const Tensor cropped = t.as_strided({2, 2}, {4, 1}, 5 * 4);
  EXPECT_EQ(elements(cropped), (std::vector<float>{5, 6, 9, 10}));
  const Tensor broadcast = t.as_strided({2, 3}, {0, 1}, 4);
  EXPECT_EQ(elements(broadcast), (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST(Tensor, ContiguousCopiesRankSevenAndEveryItemSize) {
  // [2, 1, 2, 1, 2, 1, 3] permuted so that no axis but the unit ones is in place.
  Tensor base = Tensor::empty({24}, DType::kFloat64);
  std::iota(base.data<double>(), base.data<double>() + 24, 0.0);
  const Tensor view = base.as_strided({3, 1, 2, 1, 2, 1, 2}, {1, 1, 12, 1, 6, 1, 3}, 0);
  const Tensor copy = view.contiguous();
  ASSERT_TRUE(copy.is_contiguous());
  std::vector<double> expected;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) expected.push_back(a + 12 * b + 6 * c + 3 * d);
  EXPECT_EQ(std::vector<double>(copy.data<double>(), copy.data<double>() + 24), expected);

  Tensor bytes = Tensor::empty({2, 3}, DType::kUInt8);
  std::iota(bytes.data<std::uint8_t>(), bytes.data<std::uint8_t>() + 6, std::uint8_t{0});
  const Tensor bytes_t = bytes.as_strided({3, 2}, {1, 3}, 0).contiguous();
  EXPECT_EQ(
      std::vector<std::uint8_t>(bytes_t.data<std::uint8_t>(), bytes_t.data<std::uint8_t>() + 6),
      (std::vector<std::uint8_t>{0, 3, 1, 4, 2, 5}));
}

TEST(Tensor, ViewsOutliveTheTensorTheyCameFrom) {
  Tensor view;
  {
    const Tensor t = iota(4, 6);
    view = t.as_strided({2, 2}, {6, 1}, 4 * 7);
  }
  EXPECT_EQ(elements(view), (std::vector<float>{7, 8, 13, 14}));
}

TEST(Tensor, ContiguousOfAStridedCudaTensorIsNotAvailable) {
  // Where a CUDA runtime is present it gathers device tensors (tests/cuda checks that).
  if (allocator_for(DeviceType::kCUDA)) GTEST_SKIP() << "a CUDA runtime is present";
  // A CUDA view over host memory: only the geometry is inspected, nothing is dereferenced.
  float fake[8] = {};
  const Tensor t = Tensor::from_blob(fake, {2, 2}, {1, 2}, DType::kFloat32, Device::cuda(1));
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { t.contiguous(); }),
            "Tensor::contiguous: copying a non-contiguous cuda:1 tensor is not available; only "
            "CPU tensors can be copied");
}

// Counts its allocations; memory comes from the CPU allocator so that tests may touch it.
class CountingAllocator final : public Allocator {
 public:
  explicit CountingAllocator(DeviceType type) : type_(type) {}
  DeviceType device_type() const noexcept override { return type_; }
  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    ++allocations;
    last_stream = stream;
    std::shared_ptr<void> memory = cpu_allocator()->allocate(nbytes, Stream());
    auto released = freed;
    return {memory.get(), [memory, released](void*) mutable {
              ++*released;
              memory.reset();
            }};
  }
  int allocations = 0;
  std::shared_ptr<int> freed = std::make_shared<int>(0);
  Stream last_stream;

 private:
  DeviceType type_;
};

TEST(Allocator, CudaWithoutAnInstalledAllocatorIsNotAvailable) {
  // A CUDA runtime brings its built-in allocator (tests/cuda checks it).
  if (allocator_for(DeviceType::kCUDA)) GTEST_SKIP() << "a CUDA runtime is present";
  ASSERT_EQ(allocator_for(DeviceType::kCUDA), nullptr);
  EXPECT_EQ(allocator_for(DeviceType::kMeta), nullptr);
  EXPECT_EQ(
      error_of<OpNotAvailableError>([] { Tensor::empty({2}, DType::kFloat32, Device::cuda(0)); }),
      "Tensor::empty: no allocator is installed for cuda:0 (install one with "
      "set_allocator)");
}

TEST(Allocator, InstalledAllocatorsServeTensorEmptyOnTheCurrentStream) {
  // The runtime's built-in allocator where a CUDA runtime is present, else none.
  const std::shared_ptr<Allocator> built_in = allocator_for(DeviceType::kCUDA);
  auto counting = std::make_shared<CountingAllocator>(DeviceType::kCUDA);
  EXPECT_EQ(set_allocator(DeviceType::kCUDA, counting), nullptr);
  int handle = 0;
  const Stream stream(Device::cuda(1), &handle);
  {
    StreamGuard guard(stream);
    Tensor t = Tensor::empty({4, 4}, DType::kFloat16, Device::cuda(1));
    EXPECT_EQ(t.device(), Device::cuda(1));
    EXPECT_EQ(counting->allocations, 1);
    EXPECT_EQ(counting->last_stream, stream);
    Tensor none = Tensor::empty({0}, DType::kFloat16, Device::cuda(1));
    EXPECT_EQ(counting->allocations, 1);  // zero bytes never reach the allocator
  }
  const Stream explicit_stream(Device::cuda(1), &counting);
  Tensor::empty({1}, DType::kFloat32, Device::cuda(1), &explicit_stream);
  EXPECT_EQ(counting->last_stream, explicit_stream);
  EXPECT_EQ(*counting->freed, 2);
  EXPECT_EQ(error_of<CheckError>(
                [&] { Tensor::empty({1}, DType::kFloat32, Device::cuda(0), &explicit_stream); }),
            "Tensor::empty: the stream is on cuda:1 but the tensor is to be on cuda:0");
  EXPECT_EQ(set_allocator(DeviceType::kCUDA, nullptr), counting);
  EXPECT_EQ(allocator_for(DeviceType::kCUDA), built_in);
}

TEST(Allocator, ReplacingTheCpuAllocatorAndRestoringIt) {
  auto counting = std::make_shared<CountingAllocator>(DeviceType::kCPU);
  EXPECT_EQ(set_allocator(DeviceType::kCPU, counting), nullptr);
  Tensor t = Tensor::empty({8}, DType::kInt32);
  EXPECT_EQ(counting->allocations, 1);
  EXPECT_EQ(set_allocator(DeviceType::kCPU, nullptr), counting);
  EXPECT_EQ(allocator_for(DeviceType::kCPU), cpu_allocator());
  // Memory from an uninstalled allocator is still freed by its own deleter.
  EXPECT_EQ(*counting->freed, 0);
  t = Tensor();
  EXPECT_EQ(*counting->freed, 1);
}

// An allocator whose memory is 8 bytes past an aligned block: enough for a float, not for the
// kernels' 16-byte vectors, which the access class assumes of every tensor the library allocates.
class MisalignedAllocator final : public Allocator {
 public:
  DeviceType device_type() const noexcept override { return DeviceType::kCPU; }
  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    std::shared_ptr<void> block = cpu_allocator()->allocate(nbytes + 8, stream);
    return {static_cast<std::byte*>(block.get()) + 8, [block](void*) {}};
  }
};

TEST(Allocator, MemoryNotAlignedTo16BytesBreaksTheAllocatorsContract) {
  EXPECT_EQ(set_allocator(DeviceType::kCPU, std::make_shared<MisalignedAllocator>()), nullptr);
  const std::string error =
      error_of<ContractError>([] { Tensor::empty({8}, DType::kFloat32, Device::cpu()); });
  set_allocator(DeviceType::kCPU, nullptr);
  EXPECT_THAT(error, ::testing::StartsWith("Tensor::empty: the allocator for cpu returned memory "
                                           "at "));
  EXPECT_THAT(error, ::testing::EndsWith(", not aligned to 16 bytes as allocate() must"));
  EXPECT_EQ(Tensor::empty({8}, DType::kFloat32).numel(), 8);  // the built-in one is back
}

TEST(Allocator, RejectsMismatchedInstalls) {
  EXPECT_EQ(error_of<CheckError>([] {
              set_allocator(DeviceType::kCUDA,
                            std::make_shared<CountingAllocator>(DeviceType::kCPU));
            }),
            "set_allocator: an allocator for cpu cannot serve cuda");
  EXPECT_EQ(error_of<CheckError>([] { set_allocator(DeviceType::kMeta, nullptr); }),
            "set_allocator: meta tensors have no memory, so meta takes no allocator");
}

TEST(Allocator, RegistryIsThreadSafe) {
  const std::shared_ptr<Allocator> built_in = allocator_for(DeviceType::kCUDA);
  auto counting = std::make_shared<CountingAllocator>(DeviceType::kCUDA);
  std::atomic<bool> stop{false};
  std::thread installer([&] {
    while (!stop) {
      set_allocator(DeviceType::kCUDA, counting);
      set_allocator(DeviceType::kCUDA, nullptr);
    }
  });
  for (int i = 0; i < 2000; ++i) {
    std::shared_ptr<Allocator> a = allocator_for(DeviceType::kCUDA);
    EXPECT_TRUE(a == built_in || a == counting);
    Tensor::empty({16}, DType::kFloat32);
  }
  stop = true;
  installer.join();
  set_allocator(DeviceType::kCUDA, nullptr);
}

}  // namespace
}  // namespace tileops
