// The process's accelerator: whether there is one, which of its devices is current, and the facts
// of a device. A CUDA build installs the CUDA provider at first use (the first time anything asks
// for the accelerator: an op's first call, a CUDA tensor's call, `tileops bench` choosing its
// device) when the machine has a CUDA device; tests install a fake one. Without a provider the
// process has no accelerator and calls whose device nothing decides have none.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "tileops/core/device.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops {

struct AcceleratorProvider {
  DeviceType type = DeviceType::kCUDA;
  std::function<int()> current_device;
  std::function<void(int)> set_current_device;
  std::function<DeviceFacts(int)> facts;
  // Optional; a provider that knows them states them. The number of devices (a call on an index
  // at or beyond it fails naming the tensor), and the native handle of a device's default stream
  // (a call whose stream is the null handle runs on it, so that kernels always receive a real
  // handle: Note [Default stream] in docs/cuda.md).
  std::function<int()> device_count;
  std::function<void*(int)> default_stream;
};

// Installs (or, with nullptr, removes) the process's accelerator. An explicit install, removal
// included, takes precedence over the built-in CUDA provider from then on.
void install_accelerator(std::shared_ptr<const AcceleratorProvider> provider);
std::shared_ptr<const AcceleratorProvider> accelerator();
// The accelerator's current device, or nullopt without an accelerator.
std::optional<Device> current_accelerator_device();

// Facts of `device`: the accelerator's for its devices, {arch -1, 0, 0} for any other device.
DeviceFacts device_facts(const Device& device);

// Makes `device` current for building and tuning when it is of the accelerator's type; leaves
// anything else alone. Restores the previous device on destruction.
class CurrentDeviceGuard {
 public:
  explicit CurrentDeviceGuard(const std::optional<Device>& device);
  ~CurrentDeviceGuard();
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

 private:
  const AcceleratorProvider* provider_ = nullptr;
  int previous_ = -1;
};

namespace detail {
// The installed provider without a lock or a reference count (Note [Lock-free accelerator] in
// src/op/accelerator.cpp): the call path's read. Null without an accelerator.
const AcceleratorProvider* accelerator_provider();
}  // namespace detail

}  // namespace tileops
