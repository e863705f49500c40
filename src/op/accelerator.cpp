#include "tileops/op/accelerator.hpp"

#include <mutex>

namespace tileops {
namespace {

std::mutex& provider_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<const AcceleratorProvider>& provider_slot() {
  static std::shared_ptr<const AcceleratorProvider> p;
  return p;
}

}  // namespace

void install_accelerator(std::shared_ptr<const AcceleratorProvider> provider) {
  std::lock_guard<std::mutex> lock(provider_mutex());
  provider_slot() = std::move(provider);
}

std::shared_ptr<const AcceleratorProvider> accelerator() {
  std::lock_guard<std::mutex> lock(provider_mutex());
  return provider_slot();
}

std::optional<Device> current_accelerator_device() {
  auto p = accelerator();
  if (!p) return std::nullopt;
  return Device{p->type, p->current_device()};
}

DeviceFacts device_facts(const Device& device) {
  // The CPU and meta devices have no facts: answered without taking the provider's lock.
  if (device.type != DeviceType::kCUDA) return {};
  auto p = accelerator();
  if (!p || device.type != p->type) return {};
  return p->facts(device.index);
}

CurrentDeviceGuard::CurrentDeviceGuard(const std::optional<Device>& device) {
  if (!device) return;
  auto p = accelerator();
  if (!p || device->type != p->type) return;
  previous_ = p->current_device();
  if (previous_ != device->index) {
    p->set_current_device(device->index);
    provider_ = std::move(p);
  }
}

CurrentDeviceGuard::~CurrentDeviceGuard() {
  if (provider_) provider_->set_current_device(previous_);
}

}  // namespace tileops
