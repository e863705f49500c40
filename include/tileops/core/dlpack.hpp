// DLPack exchange: tensors in and out of other frameworks (PyTorch, NumPy, CuPy, JAX) without a
// copy. The structs are declared here from the DLPack 1.1 specification, ABI-compatible with
// the specification's C header, in namespace tileops::dlpack so that they never clash with a
// copy of that header; a caller holding the header's types passes them with reinterpret_cast.
//
// Note [DLPack ownership]
// Import: from_dlpack takes the producer's managed tensor. On success the Tensor (and every view
// of it) owns it and calls its deleter exactly once, when the last of them dies. On failure it
// throws DLPackError naming what is wrong and does NOT call the deleter: the caller still owns
// the managed tensor and disposes of it. (The specification lets a consumer call the deleter of
// a tensor whose major version it cannot read; we leave that to the caller too, so that a
// failed import has one rule.)
// Export: to_dlpack_* returns a managed tensor that keeps the exported tensor's storage alive
// until the consumer calls its deleter, exactly once.
#pragma once

#include <cstdint>

#include "tileops/core/tensor.hpp"

namespace tileops {
namespace dlpack {

// The DLPack version this library implements. A tensor of another major version has another
// layout and is refused; a newer minor version only adds enumeration values.
inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory (cudaMallocHost)
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18,
};

struct DLDevice {
  DLDeviceType device_type;
  std::int32_t device_id;
};

// Values of DLDataType::code.
enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e3m4 = 7,
  kDLFloat8_e4m3 = 8,
  kDLFloat8_e4m3b11fnuz = 9,
  kDLFloat8_e4m3fn = 10,
  kDLFloat8_e4m3fnuz = 11,
  kDLFloat8_e5m2 = 12,
  kDLFloat8_e5m2fnuz = 13,
  kDLFloat8_e8m0fnu = 14,
  kDLFloat6_e2m3fn = 15,
  kDLFloat6_e3m2fn = 16,
  kDLFloat4_e2m1fn = 17,
};

struct DLDataType {
  std::uint8_t code;  // a DLDataTypeCode
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null means row-major contiguous
  std::uint64_t byte_offset;
};

// The pre-1.0 managed tensor: no version, no flags.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// Bits of DLManagedTensorVersioned::flags.
inline constexpr std::uint64_t kFlagBitmaskReadOnly = std::uint64_t{1} << 0;
inline constexpr std::uint64_t kFlagBitmaskIsCopied = std::uint64_t{1} << 1;
inline constexpr std::uint64_t kFlagBitmaskIsSubbyteTypePadded = std::uint64_t{1} << 2;

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace dlpack

// Imports a DLPack tensor without copying; Note [DLPack ownership]. Accepts CPU, pinned host
// (imported as CPU) and CUDA memory, the dtypes of DType, non-negative strides (null strides
// mean contiguous) and a byte offset that is a multiple of the element size. A read-only
// versioned tensor imports as read_only().
Tensor from_dlpack(dlpack::DLManagedTensorVersioned* managed);
// The same for a legacy managed tensor, which is never read-only.
Tensor from_dlpack(dlpack::DLManagedTensor* managed);

// Exports a CPU or CUDA tensor without copying; the consumer calls the result's deleter. A
// read-only tensor carries the read-only flag. Throws DLPackError for undefined and meta tensors.
dlpack::DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor);
// The same as a legacy managed tensor. It has no read-only flag, so a read-only tensor is
// refused with DLPackError rather than handed to a consumer that may write to it.
dlpack::DLManagedTensor* to_dlpack_legacy(const Tensor& tensor);

}  // namespace tileops
