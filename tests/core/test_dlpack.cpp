// DLPack import and export: round trips, ownership (deleters run exactly once, and never after
// a failed import), read-only flags, dtype and device mapping, malformed producers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/test_helpers.hpp"
#include "tileops/core/dlpack.hpp"
#include "tileops/core/error.hpp"

namespace tileops {
namespace {

namespace dl = dlpack;

std::string dlpack_error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const DLPackError& e) {
    return e.what();
  }
  return "no error";
}

// A producer's managed tensor over its own buffer; the deleter counts its calls instead of
// freeing, so that tests can check it ran exactly once (or not at all).
template <class Managed>
struct FakeProducer {
  Managed managed{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::vector<float> buffer;
  int deleter_calls = 0;

  explicit FakeProducer(std::vector<std::int64_t> dims) : shape(std::move(dims)) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d > 0 ? d : 0;
    buffer.resize(static_cast<std::size_t>(n));
    std::iota(buffer.begin(), buffer.end(), 0.0f);
    dl::DLTensor& t = managed.dl_tensor;
    t.data = buffer.data();
    t.device = {dl::kDLCPU, 0};
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = {dl::kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](Managed* self) {
      ++static_cast<FakeProducer*>(self->manager_ctx)->deleter_calls;
    };
    if constexpr (std::is_same_v<Managed, dl::DLManagedTensorVersioned>) {
      managed.version = {1, 1};
      managed.flags = 0;
    }
  }
  void set_strides(std::vector<std::int64_t> s) {
    strides = std::move(s);
    managed.dl_tensor.strides = strides.data();
  }
};

using Versioned = FakeProducer<dl::DLManagedTensorVersioned>;
using Legacy = FakeProducer<dl::DLManagedTensor>;

TEST(DLPack, DeclarationsMatchTheSpecificationLayout) {
  EXPECT_EQ(sizeof(dl::DLTensor), 48u);
  EXPECT_EQ(sizeof(dl::DLManagedTensor), 64u);
  EXPECT_EQ(sizeof(dl::DLManagedTensorVersioned), 80u);
  EXPECT_EQ(offsetof(dl::DLManagedTensorVersioned, dl_tensor), 32u);
  EXPECT_EQ(offsetof(dl::DLManagedTensor, deleter), 56u);
  EXPECT_EQ(dl::kFlagBitmaskReadOnly, 1u);
  EXPECT_EQ(dl::kFlagBitmaskIsCopied, 2u);
  EXPECT_EQ(dl::kDLFloat8_e4m3fn, 10);
  EXPECT_EQ(dl::kDLFloat8_e5m2, 12);
}

TEST(DLPack, ImportOwnsTheProducerUntilTheLastViewDies) {
  Versioned producer({2, 3});
  Tensor view;
  {
    const Tensor t = from_dlpack(&producer.managed);
    EXPECT_EQ(t.shape(), Shape({2, 3}));
    EXPECT_EQ(t.strides(), Shape({3, 1}));  // null strides mean contiguous
    EXPECT_EQ(t.dtype(), DType::kFloat32);
    EXPECT_EQ(t.device(), Device::cpu());
    EXPECT_EQ(t.data_ptr(), producer.buffer.data());
    EXPECT_FALSE(t.read_only());
    view = t.as_strided({3}, {1}, 12);
  }
  EXPECT_EQ(producer.deleter_calls, 0);
  EXPECT_EQ(view.data<float>()[2], 5.0f);
  view = Tensor();
  EXPECT_EQ(producer.deleter_calls, 1);
}

TEST(DLPack, LegacyImportOwnsTheProducerToo) {
  Legacy producer({4});
  producer.set_strides({1});
  {
    const Tensor t = from_dlpack(&producer.managed);
    const Tensor copy = t;
    EXPECT_EQ(t.data<float>()[3], 3.0f);
    EXPECT_FALSE(t.read_only());
  }
  EXPECT_EQ(producer.deleter_calls, 1);
}

TEST(DLPack, ImportHonoursStridesByteOffsetAndReadOnly) {
  Versioned producer({2, 2});
  producer.buffer.resize(12);
  std::iota(producer.buffer.begin(), producer.buffer.end(), 0.0f);
  producer.managed.dl_tensor.data = producer.buffer.data();
  producer.set_strides({1, 4});  // a transposed view
  producer.managed.dl_tensor.byte_offset = 2 * sizeof(float);
  producer.managed.flags = dl::kFlagBitmaskReadOnly | dl::kFlagBitmaskIsCopied;
  {
    const Tensor t = from_dlpack(&producer.managed);
    EXPECT_TRUE(t.read_only());
    EXPECT_FALSE(t.is_contiguous());
    EXPECT_EQ(t.data_ptr(), producer.buffer.data() + 2);
    const Tensor c = t.contiguous();
    EXPECT_EQ(std::vector<float>(c.data<float>(), c.data<float>() + 4),
              (std::vector<float>{2, 6, 3, 7}));
    // The storage is what the producer exposed: nothing before element 0, nothing past the end.
    EXPECT_EQ(t.storage()->nbytes(), 6 * sizeof(float));
    EXPECT_EQ(test_common::error_of<CheckError>([&] { t.as_strided({7}, {1}, 0); }),
              "Tensor::as_strided: a view of shape [7] with strides [1] at byte offset 0 reaches "
              "outside the storage of 24 bytes");
  }
  EXPECT_EQ(producer.deleter_calls, 1);
}

TEST(DLPack, ImportMapsDevices) {
  Versioned cuda({2});
  cuda.managed.dl_tensor.device = {dl::kDLCUDA, 3};
  Versioned pinned({2});
  pinned.managed.dl_tensor.device = {dl::kDLCUDAHost, 0};
  EXPECT_EQ(from_dlpack(&cuda.managed).device(), Device::cuda(3));
  EXPECT_EQ(from_dlpack(&pinned.managed).device(), Device::cpu());
  EXPECT_EQ(cuda.deleter_calls, 1);
  EXPECT_EQ(pinned.deleter_calls, 1);
}

TEST(DLPack, ExportImportRoundTripsEveryDType) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    const Tensor t = Tensor::empty({3, 2}, dtype);
    dl::DLManagedTensorVersioned* managed = to_dlpack_versioned(t);
    EXPECT_EQ(managed->dl_tensor.dtype.bits, dtype_bits(dtype));
    EXPECT_EQ(managed->dl_tensor.dtype.lanes, 1);
    const Tensor back = from_dlpack(managed);
    EXPECT_EQ(back.dtype(), dtype) << dtype_name(dtype);
    EXPECT_EQ(back.data_ptr(), t.data_ptr());
    EXPECT_TRUE(back.shares_storage_with(t));
  }
}

TEST(DLPack, ExportUsesTheSpecificationsTypeCodes) {
  auto code_of = [](DType dtype) {
    dl::DLManagedTensorVersioned* managed = to_dlpack_versioned(Tensor::empty({1}, dtype));
    const dl::DLDataType type = managed->dl_tensor.dtype;
    managed->deleter(managed);
    return std::pair<int, int>(type.code, type.bits);
  };
  EXPECT_EQ(code_of(DType::kBool), std::make_pair(6, 8));
  EXPECT_EQ(code_of(DType::kUInt8), std::make_pair(1, 8));
  EXPECT_EQ(code_of(DType::kInt16), std::make_pair(0, 16));
  EXPECT_EQ(code_of(DType::kInt64), std::make_pair(0, 64));
  EXPECT_EQ(code_of(DType::kFloat16), std::make_pair(2, 16));
  EXPECT_EQ(code_of(DType::kBFloat16), std::make_pair(4, 16));
  EXPECT_EQ(code_of(DType::kFloat64), std::make_pair(2, 64));
  EXPECT_EQ(code_of(DType::kFloat8E4M3FN), std::make_pair(10, 8));
  EXPECT_EQ(code_of(DType::kFloat8E5M2), std::make_pair(12, 8));
}

TEST(DLPack, ExportedViewsKeepTheStorageAlive) {
  dl::DLManagedTensorVersioned* managed = nullptr;
  void* expected = nullptr;
  {
    Tensor t = Tensor::empty({4, 6}, DType::kFloat32);
    std::iota(t.data<float>(), t.data<float>() + 24, 0.0f);
    const Tensor column = t.as_strided({4}, {6}, 2 * 4);
    expected = column.data_ptr();
    managed = to_dlpack_versioned(column);
  }
  const dl::DLTensor& out = managed->dl_tensor;
  EXPECT_EQ(managed->version.major, 1u);
  EXPECT_EQ(managed->flags, 0u);
  EXPECT_EQ(out.data, expected);
  EXPECT_EQ(out.byte_offset, 0u);
  EXPECT_EQ(out.device.device_type, dl::kDLCPU);
  EXPECT_EQ(out.ndim, 1);
  EXPECT_EQ(out.shape[0], 4);
  EXPECT_EQ(out.strides[0], 6);
  EXPECT_EQ(static_cast<const float*>(out.data)[18], 20.0f);  // element 3 of the column
  managed->deleter(managed);
}

TEST(DLPack, RoundTripOfARankSevenViewOutlivesEverything) {
  Tensor imported;
  {
    const Tensor base = Tensor::empty({2, 1, 2, 1, 2, 1, 2}, DType::kInt32);
    std::iota(base.data<std::int32_t>(), base.data<std::int32_t>() + 16, 0);
    const Tensor view = base.as_strided({2, 1, 2, 1, 2, 1, 2}, {1, 1, 2, 1, 4, 1, 8}, 0);
    dl::DLManagedTensor* legacy = to_dlpack_legacy(view);
    imported = from_dlpack(legacy);
    EXPECT_EQ(imported.shape(), view.shape());
    EXPECT_EQ(imported.strides(), view.strides());
    EXPECT_EQ(imported.data_ptr(), view.data_ptr());
  }
  const Tensor copy = imported.contiguous();
  EXPECT_EQ(copy.data<std::int32_t>()[1], 8);
}

TEST(DLPack, ReadOnlyTensorsExportWithTheFlagOrNotAtAll) {
  std::vector<float> memory(4, 1.0f);
  const Tensor t =
      Tensor::from_blob(memory.data(), {4}, {1}, DType::kFloat32, Device::cpu(), nullptr, true);
  dl::DLManagedTensorVersioned* managed = to_dlpack_versioned(t);
  EXPECT_EQ(managed->flags, dl::kFlagBitmaskReadOnly);
  EXPECT_TRUE(from_dlpack(managed).read_only());
  EXPECT_EQ(dlpack_error_of([&] { to_dlpack_legacy(t); }),
            "to_dlpack_legacy: the tensor is read-only and DLManagedTensor cannot say so; use "
            "to_dlpack_versioned");
}

TEST(DLPack, ExportMapsCudaAndEmptyTensors) {
  float fake[4] = {};
  const Tensor cuda = Tensor::from_blob(fake, {4}, {1}, DType::kFloat32, Device::cuda(2));
  dl::DLManagedTensor* managed = to_dlpack_legacy(cuda);
  EXPECT_EQ(managed->dl_tensor.device.device_type, dl::kDLCUDA);
  EXPECT_EQ(managed->dl_tensor.device.device_id, 2);
  managed->deleter(managed);

  const Tensor empty = Tensor::empty({0, 5}, DType::kFloat32);
  dl::DLManagedTensorVersioned* none = to_dlpack_versioned(empty);
  EXPECT_EQ(none->dl_tensor.data, nullptr);
  const Tensor back = from_dlpack(none);
  EXPECT_EQ(back.shape(), Shape({0, 5}));
  EXPECT_EQ(back.data_ptr(), nullptr);

  dl::DLManagedTensorVersioned* scalar = to_dlpack_versioned(Tensor::empty({}, DType::kInt8));
  EXPECT_EQ(scalar->dl_tensor.ndim, 0);
  EXPECT_EQ(from_dlpack(scalar).numel(), 1);
}

TEST(DLPack, ExportRefusesTensorsWithoutData) {
  EXPECT_EQ(dlpack_error_of([] { to_dlpack_versioned(Tensor()); }),
            "to_dlpack_versioned: the tensor is undefined");
  EXPECT_EQ(dlpack_error_of([] { to_dlpack_legacy(Tensor::meta({2}, DType::kInt8)); }),
            "to_dlpack_legacy: a meta tensor has no data to export");
}

TEST(DLPack, NullPointersAreRefused) {
  EXPECT_EQ(
      dlpack_error_of([] { from_dlpack(static_cast<dl::DLManagedTensorVersioned*>(nullptr)); }),
      "from_dlpack: null DLManagedTensorVersioned");
  EXPECT_EQ(dlpack_error_of([] { from_dlpack(static_cast<dl::DLManagedTensor*>(nullptr)); }),
            "from_dlpack: null DLManagedTensor");
}

// Each malformed producer fails with its own message and keeps its managed tensor: the deleter
// must not run.
struct Malformed {
  const char* name;
  std::function<void(Versioned&)> spoil;
  const char* message;
};

TEST(DLPack, MalformedProducersAreRefusedWithoutCallingTheDeleter) {
  const std::vector<Malformed> cases = {
      {"major version",
       [](Versioned& p) {
         p.managed.version = {2, 0};
       },
       "from_dlpack: unsupported DLPack major version 2 (this library reads 1)"},
      {"device type",
       [](Versioned& p) {
         p.managed.dl_tensor.device = {dl::kDLROCM, 0};
       },
       "from_dlpack: unsupported device type 10 (expected kDLCPU, kDLCUDAHost or kDLCUDA)"},
      {"device id",
       [](Versioned& p) {
         p.managed.dl_tensor.device = {dl::kDLCUDA, -1};
       },
       "from_dlpack: negative CUDA device id -1"},
      {"ndim", [](Versioned& p) { p.managed.dl_tensor.ndim = -1; },
       "from_dlpack: negative ndim -1"},
      {"null shape", [](Versioned& p) { p.managed.dl_tensor.shape = nullptr; },
       "from_dlpack: null shape for ndim 2"},
      {"complex",
       [](Versioned& p) {
         p.managed.dl_tensor.dtype = {dl::kDLComplex, 64, 1};
       },
       "from_dlpack: unsupported dtype (code 5, bits 64, lanes 1)"},
      {"lanes",
       [](Versioned& p) {
         p.managed.dl_tensor.dtype = {dl::kDLFloat, 32, 4};
       },
       "from_dlpack: unsupported dtype (code 2, bits 32, lanes 4)"},
      {"bits",
       [](Versioned& p) {
         p.managed.dl_tensor.dtype = {dl::kDLUInt, 16, 1};
       },
       "from_dlpack: unsupported dtype (code 1, bits 16, lanes 1)"},
      {"bool bits",
       [](Versioned& p) {
         p.managed.dl_tensor.dtype = {dl::kDLBool, 1, 1};
       },
       "from_dlpack: unsupported dtype (code 6, bits 1, lanes 1)"},
      {"fp8 e4m3fnuz",
       [](Versioned& p) {
         p.managed.dl_tensor.dtype = {dl::kDLFloat8_e4m3fnuz, 8, 1};
       },
       "from_dlpack: unsupported dtype (code 11, bits 8, lanes 1)"},
      {"negative length", [](Versioned& p) { p.shape[1] = -3; },
       "from_dlpack: negative length -3 at axis 1"},
      {"negative stride",
       [](Versioned& p) {
         p.set_strides({-3, 1});
       },
       "from_dlpack: negative stride -3 at axis 0 (negative strides are not supported)"},
      {"null data", [](Versioned& p) { p.managed.dl_tensor.data = nullptr; },
       "from_dlpack: null data for a tensor of 6 elements"},
      {"byte offset", [](Versioned& p) { p.managed.dl_tensor.byte_offset = 3; },
       "from_dlpack: byte_offset 3 is not a multiple of the element size 4"},
      {"overflow",
       [](Versioned& p) {
         p.set_strides({std::numeric_limits<std::int64_t>::max() / 2, 1});
       },
       "from_dlpack: shape [2, 3] with strides [4611686018427387903, 1] and byte_offset 0 spans "
       "more bytes than int64 can count"},
  };
  for (const Malformed& c : cases) {
    Versioned producer({2, 3});
    c.spoil(producer);
    EXPECT_EQ(dlpack_error_of([&] { from_dlpack(&producer.managed); }), c.message) << c.name;
    EXPECT_EQ(producer.deleter_calls, 0) << c.name;
  }
}

TEST(DLPack, DataNotAlignedToItsElementsIsRefusedWithoutCallingTheDeleter) {
  Versioned producer({2, 3});
  producer.managed.dl_tensor.data = static_cast<std::byte*>(producer.managed.dl_tensor.data) + 1;
  const std::string error = dlpack_error_of([&] { from_dlpack(&producer.managed); });
  EXPECT_THAT(error, ::testing::StartsWith("from_dlpack: Tensor::from_blob: data at "));
  EXPECT_THAT(error, ::testing::EndsWith(" is not aligned to its 4-byte float32 elements"));
  EXPECT_EQ(producer.deleter_calls, 0);
}

TEST(DLPack, MalformedLegacyProducersKeepTheirTensor) {
  Legacy producer({2, 3});
  producer.managed.dl_tensor.dtype = {dl::kDLOpaqueHandle, 64, 1};
  EXPECT_EQ(dlpack_error_of([&] { from_dlpack(&producer.managed); }),
            "from_dlpack: unsupported dtype (code 3, bits 64, lanes 1)");
  EXPECT_EQ(producer.deleter_calls, 0);
}

TEST(DLPack, NewerMinorVersionsAndNullDeletersAreAccepted) {
  Versioned producer({1});
  producer.managed.version = {1, 7};
  producer.managed.deleter = nullptr;
  const Tensor t = from_dlpack(&producer.managed);
  EXPECT_EQ(t.numel(), 1);
}

}  // namespace
}  // namespace tileops
