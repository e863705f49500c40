// Note [Device runtimes]
// Core (src/core, include/tileops/core) includes no device header and calls no device API. What
// it needs of a device type with memory of its own — a built-in allocator, and copies into, out
// of and within that memory — it asks of the type's runtime through this interface. A CUDA build
// has the CUDA runtime (src/cuda/runtime.cpp), which device_runtime() reaches at first use: the
// first CUDA tensor allocated or copied installs nothing by a static initialiser. A CPU-only build,
// or a CUDA build on a machine without a device, has none: CUDA tensors there can be described
// (views over memory someone else owns, meta calls, signature checks) but not allocated or copied.
#pragma once

#include <memory>

#include "tileops/core/allocator.hpp"
#include "tileops/core/device.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::detail {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // The runtime's built-in allocator; the same object on every call.
  virtual std::shared_ptr<Allocator> allocator() = 0;

  // dst <- src, element by element: equal shapes and dtypes, any strides, storages that do not
  // overlap (Tensor::copy_from stages overlapping ones), one side on this runtime's device type
  // and the other on the CPU or on the same type. Device work goes to the current stream of the
  // device it runs on; the copy has finished reading and writing host memory when it returns, and
  // a copy between two devices has finished altogether.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
};

// The runtime of `type`, or null when this build has none or the machine has no such device.
DeviceRuntime* device_runtime(DeviceType type);

}  // namespace tileops::detail
