#include "tileops/core/dlpack.hpp"

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "tileops/core/error.hpp"

namespace tileops {

namespace dl = dlpack;

namespace {

// The declarations must match the specification's C layout on the platforms we build for.
static_assert(sizeof(void*) != 8 || sizeof(dl::DLTensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(dl::DLManagedTensor) == 64);
static_assert(sizeof(void*) != 8 || sizeof(dl::DLManagedTensorVersioned) == 80);
static_assert(sizeof(void*) != 8 || offsetof(dl::DLManagedTensorVersioned, flags) == 24);
static_assert(sizeof(void*) != 8 || offsetof(dl::DLTensor, byte_offset) == 40);
static_assert(sizeof(dl::DLDataType) == 4 && sizeof(dl::DLDevice) == 8);

[[noreturn]] void fail(const std::string& what) { throw DLPackError("from_dlpack: " + what); }

std::optional<DType> dtype_from_dlpack(dl::DLDataType type) {
  if (type.lanes != 1) return std::nullopt;
  switch (type.code) {
    case dl::kDLInt:
      switch (type.bits) {
        case 8:
          return DType::kInt8;
        case 16:
          return DType::kInt16;
        case 32:
          return DType::kInt32;
        case 64:
          return DType::kInt64;
      }
      return std::nullopt;
    case dl::kDLUInt:
      return type.bits == 8 ? std::optional(DType::kUInt8) : std::nullopt;
    case dl::kDLFloat:
      switch (type.bits) {
        case 16:
          return DType::kFloat16;
        case 32:
          return DType::kFloat32;
        case 64:
          return DType::kFloat64;
      }
      return std::nullopt;
    case dl::kDLBfloat:
      return type.bits == 16 ? std::optional(DType::kBFloat16) : std::nullopt;
    case dl::kDLBool:
      return type.bits == 8 ? std::optional(DType::kBool) : std::nullopt;
    case dl::kDLFloat8_e4m3fn:
      return type.bits == 8 ? std::optional(DType::kFloat8E4M3FN) : std::nullopt;
    case dl::kDLFloat8_e5m2:
      return type.bits == 8 ? std::optional(DType::kFloat8E5M2) : std::nullopt;
    default:
      return std::nullopt;
  }
}

dl::DLDataType dtype_to_dlpack(DType dtype) {
  const auto bits = static_cast<std::uint8_t>(dtype_bits(dtype));
  switch (dtype) {
    case DType::kBool:
      return {dl::kDLBool, bits, 1};
    case DType::kUInt8:
      return {dl::kDLUInt, bits, 1};
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return {dl::kDLInt, bits, 1};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {dl::kDLFloat, bits, 1};
    case DType::kBFloat16:
      return {dl::kDLBfloat, bits, 1};
    case DType::kFloat8E4M3FN:
      return {dl::kDLFloat8_e4m3fn, bits, 1};
    case DType::kFloat8E5M2:
      return {dl::kDLFloat8_e5m2, bits, 1};
  }
  return {dl::kDLOpaqueHandle, bits, 1};
}

Device device_from_dlpack(dl::DLDevice device) {
  switch (device.device_type) {
    case dl::kDLCPU:
    case dl::kDLCUDAHost:  // host memory the CPU reads directly
      return Device::cpu();
    case dl::kDLCUDA:
      if (device.device_id < 0) fail("negative CUDA device id " + std::to_string(device.device_id));
      return Device::cuda(device.device_id);
    default:
      fail("unsupported device type " + std::to_string(device.device_type) +
           " (expected kDLCPU, kDLCUDAHost or kDLCUDA)");
  }
}

// The producer's managed tensor, held by an imported storage. Its deleter runs when the storage
// dies, but only once armed: a failed import leaves the managed tensor to the caller.
template <class Managed>
class ProducerHandle {
 public:
  explicit ProducerHandle(Managed* managed) noexcept : managed_(managed) {}
  ~ProducerHandle() {
    if (armed_ && managed_->deleter != nullptr) managed_->deleter(managed_);
  }
  ProducerHandle(const ProducerHandle&) = delete;
  ProducerHandle& operator=(const ProducerHandle&) = delete;

  void arm() noexcept { armed_ = true; }

 private:
  Managed* managed_;
  bool armed_ = false;
};

template <class Managed>
Tensor import_managed(Managed* managed, bool read_only) {
  const dl::DLTensor& source = managed->dl_tensor;
  const Device device = device_from_dlpack(source.device);
  if (source.ndim < 0) fail("negative ndim " + std::to_string(source.ndim));
  if (source.ndim > 0 && source.shape == nullptr) {
    fail("null shape for ndim " + std::to_string(source.ndim));
  }
  const std::optional<DType> dtype = dtype_from_dlpack(source.dtype);
  if (!dtype) {
    fail("unsupported dtype (code " + std::to_string(source.dtype.code) + ", bits " +
         std::to_string(source.dtype.bits) + ", lanes " + std::to_string(source.dtype.lanes) + ")");
  }

  const auto rank = static_cast<std::size_t>(source.ndim);
  Shape shape(std::span<const std::int64_t>(source.shape, rank));
  for (std::size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      fail("negative length " + std::to_string(shape[i]) + " at axis " + std::to_string(i));
    }
  }
  Shape strides = source.strides == nullptr
                      ? contiguous_strides(shape)
                      : Shape(std::span<const std::int64_t>(source.strides, rank));
  for (std::size_t i = 0; i < rank; ++i) {
    if (strides[i] < 0) {
      fail("negative stride " + std::to_string(strides[i]) + " at axis " + std::to_string(i) +
           " (negative strides are not supported)");
    }
  }

  const std::optional<std::int64_t> numel = shape.checked_numel();
  const std::optional<std::int64_t> extent = strided_extent(shape, strides);
  const auto itemsize = static_cast<std::uint64_t>(dtype_size(*dtype));
  std::uint64_t end = 0;
  if (!numel || !extent ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(*extent), itemsize, &end) ||
      __builtin_add_overflow(end, source.byte_offset, &end) ||
      end > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail("shape " + shape.str() + " with strides " + strides.str() + " and byte_offset " +
         std::to_string(source.byte_offset) + " spans more bytes than int64 can count");
  }
  if (*numel > 0 && source.data == nullptr) {
    fail("null data for a tensor of " + std::to_string(*numel) + " elements");
  }
  if (source.byte_offset % itemsize != 0) {
    fail("byte_offset " + std::to_string(source.byte_offset) +
         " is not a multiple of the element size " + std::to_string(itemsize));
  }

  // The offset is folded into the base so that the storage covers exactly what the producer
  // exposed, from element 0 on. A zero-element tensor may have null data: no arithmetic on it.
  void* base =
      source.data == nullptr ? nullptr : static_cast<std::byte*>(source.data) + source.byte_offset;
  auto handle = std::make_shared<ProducerHandle<Managed>>(managed);
  ProducerHandle<Managed>& producer = *handle;
  Tensor tensor;
  try {
    tensor = Tensor::from_blob(base, shape, strides, *dtype, device, std::move(handle), read_only);
  } catch (const CheckError& e) {
    fail(e.what());  // the handle died unarmed: the caller keeps the managed tensor
  }
  producer.arm();
  return tensor;
}

// What an exported managed tensor points into: the tensor (whose copy keeps the storage alive)
// and the shape and stride arrays the DLTensor refers to.
template <class Managed>
struct ExportContext {
  Managed managed{};
  Tensor tensor;
  Shape shape;
  Shape strides;
};

template <class Managed>
Managed* export_tensor(const Tensor& tensor, const char* who) {
  if (!tensor.defined()) throw DLPackError(std::string(who) + ": the tensor is undefined");
  if (tensor.is_meta()) {
    throw DLPackError(std::string(who) + ": a meta tensor has no data to export");
  }
  auto context = std::make_unique<ExportContext<Managed>>();
  context->tensor = tensor;
  context->shape = tensor.shape();
  context->strides = tensor.strides();

  dl::DLTensor& target = context->managed.dl_tensor;
  // The specification asks for null data in a tensor of no elements.
  target.data = tensor.numel() == 0 ? nullptr : tensor.data_ptr();
  target.device = tensor.device().is_cuda() ? dl::DLDevice{dl::kDLCUDA, tensor.device().index}
                                            : dl::DLDevice{dl::kDLCPU, 0};
  target.ndim = static_cast<std::int32_t>(tensor.dim());
  target.dtype = dtype_to_dlpack(tensor.dtype());
  target.shape = context->shape.data();
  target.strides = context->strides.data();
  target.byte_offset = 0;
  context->managed.manager_ctx = context.get();
  context->managed.deleter = [](Managed* self) {
    if (self != nullptr) delete static_cast<ExportContext<Managed>*>(self->manager_ctx);
  };
  return &context.release()->managed;
}

}  // namespace

Tensor from_dlpack(dl::DLManagedTensorVersioned* managed) {
  if (managed == nullptr) fail("null DLManagedTensorVersioned");
  // Only version and the deleter are laid out alike across major versions; read nothing else.
  if (managed->version.major != dl::kMajorVersion) {
    fail("unsupported DLPack major version " + std::to_string(managed->version.major) +
         " (this library reads " + std::to_string(dl::kMajorVersion) + ")");
  }
  return import_managed(managed, (managed->flags & dl::kFlagBitmaskReadOnly) != 0);
}

Tensor from_dlpack(dl::DLManagedTensor* managed) {
  if (managed == nullptr) fail("null DLManagedTensor");
  return import_managed(managed, false);
}

dl::DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor) {
  dl::DLManagedTensorVersioned* managed =
      export_tensor<dl::DLManagedTensorVersioned>(tensor, "to_dlpack_versioned");
  managed->version = {dl::kMajorVersion, dl::kMinorVersion};
  managed->flags = tensor.read_only() ? dl::kFlagBitmaskReadOnly : 0;
  return managed;
}

dl::DLManagedTensor* to_dlpack_legacy(const Tensor& tensor) {
  if (tensor.read_only()) {
    throw DLPackError(
        "to_dlpack_legacy: the tensor is read-only and DLManagedTensor cannot say so; use "
        "to_dlpack_versioned");
  }
  return export_tensor<dl::DLManagedTensor>(tensor, "to_dlpack_legacy");
}

}  // namespace tileops
