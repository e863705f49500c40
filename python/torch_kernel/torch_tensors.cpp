// torch_tensors.hpp: library tensors and torch tensors as views of each other.
#include "torch_tensors.hpp"

#include <ATen/ops/empty_strided.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/Storage.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "lazy_bits.hpp"

namespace tileops::torch_kernel {

DType dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kBool:
      return DType::kBool;
    case at::kByte:
      return DType::kUInt8;
    case at::kChar:
      return DType::kInt8;
    case at::kShort:
      return DType::kInt16;
    case at::kInt:
      return DType::kInt32;
    case at::kLong:
      return DType::kInt64;
    case at::kHalf:
      return DType::kFloat16;
    case at::kBFloat16:
      return DType::kBFloat16;
    case at::kFloat:
      return DType::kFloat32;
    case at::kDouble:
      return DType::kFloat64;
    case at::kFloat8_e4m3fn:
      return DType::kFloat8E4M3FN;
    case at::kFloat8_e5m2:
      return DType::kFloat8E5M2;
    default:
      C10_THROW_ERROR(TypeError, "tileops: torch dtype " + std::string(c10::toString(type)) +
                                     " has no library dtype");
  }
}

at::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return at::kBool;
    case DType::kUInt8:
      return at::kByte;
    case DType::kInt8:
      return at::kChar;
    case DType::kInt16:
      return at::kShort;
    case DType::kInt32:
      return at::kInt;
    case DType::kInt64:
      return at::kLong;
    case DType::kFloat16:
      return at::kHalf;
    case DType::kBFloat16:
      return at::kBFloat16;
    case DType::kFloat32:
      return at::kFloat;
    case DType::kFloat64:
      return at::kDouble;
    case DType::kFloat8E4M3FN:
      return at::kFloat8_e4m3fn;
    case DType::kFloat8E5M2:
      return at::kFloat8_e5m2;
  }
  C10_THROW_ERROR(Error, "tileops: unknown library dtype");
}

Device device_of(const at::Device& device) {
  if (device.is_cpu()) return Device::cpu();
  TORCH_CHECK_NOT_IMPLEMENTED(device.is_cuda(), "tileops: torch device ", device,
                              " is neither the CPU nor a CUDA device");
  return Device::cuda(device.index());
}

// The view holds t's storage rather than t: the storage is the memory, all a view needs, and a
// copy of an at::Tensor whose TensorImpl has a Python object (every tensor made in Python) takes
// and later drops a reference to that object with the GIL (torch's PyObject preservation), which
// cost the Python fast path about a tenth of a call per tensor. t's data pointer lies in its
// storage, so holding the storage keeps the viewed elements alive.
const char* lazy_bit_of(const at::Tensor& t) {
  if (t.is_neg()) return kNegativeBit;
  if (t.is_conj()) return kConjugateBit;
  return nullptr;
}

Tensor view_of(const at::Tensor& t) {
  if (const char* bit = lazy_bit_of(t)) C10_THROW_ERROR(ValueError, std::string("tileops: ") + bit);
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const Shape shape(std::span<const std::int64_t>(sizes.data(), sizes.size()));
  const Shape steps(std::span<const std::int64_t>(strides.data(), strides.size()));
  void* data = t.data_ptr();  // throws for a tensor without storage (a wrapper subclass)
  return Tensor::from_blob(data, shape, steps, dtype_of(t.scalar_type()), device_of(t.device()),
                           std::make_shared<c10::Storage>(t.storage()));
}

at::Tensor torch_of(const Tensor& t) {
  const at::IntArrayRef sizes(t.shape().data(), t.shape().size());
  const at::IntArrayRef strides(t.strides().data(), t.strides().size());
  // A meta tensor (an op constructed for the meta device states its outputs' geometry) has no
  // memory: torch's own meta tensor of that geometry, never a CPU tensor over a null pointer.
  if (t.is_meta())
    return at::empty_strided(
        sizes, strides, at::TensorOptions().dtype(scalar_type_of(t.dtype())).device(at::kMeta));
  const at::Device device =
      t.device().is_cuda() ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(t.device().index))
                           : at::Device(at::kCPU);
  auto* held = new Tensor(t);
  return at::for_blob(t.data_ptr(), sizes)
      .strides(strides)
      .deleter([held](void*) { delete held; })
      .options(at::TensorOptions().dtype(scalar_type_of(t.dtype())).device(device))
      .make_tensor();
}

void* current_cuda_stream(int index) {
  const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle();
}

}  // namespace tileops::torch_kernel
