// The process's accelerator: whether there is one, which of its devices is current, and the facts
// of a device. A CUDA build installs the CUDA provider; tests install a fake one. Without a
// provider the process has no accelerator and calls whose device nothing decides have none.
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
};

// Installs (or, with nullptr, removes) the process's accelerator.
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
  std::shared_ptr<const AcceleratorProvider> provider_;
  int previous_ = -1;
};

}  // namespace tileops
