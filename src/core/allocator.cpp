#include "tileops/core/allocator.hpp"

#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "core/device_runtime.hpp"
#include "tileops/core/error.hpp"

namespace tileops {

namespace {

class CpuAllocator final : public Allocator {
 public:
  DeviceType device_type() const noexcept override { return DeviceType::kCPU; }

  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream&) override {
    constexpr std::align_val_t kAlign{kCpuAlignment};
    void* memory = ::operator new(nbytes, kAlign);
    // Should the control block fail to allocate, shared_ptr runs the deleter itself: no leak.
    return std::shared_ptr<void>(memory, [](void* p) { ::operator delete(p, kAlign); });
  }
};

// The user-installed allocators, by device type; an empty slot means the built-in one.
struct Registry {
  std::mutex mutex;
  std::shared_ptr<Allocator> installed[static_cast<std::size_t>(DeviceType::kMeta) + 1];
};

Registry& registry() {
  static Registry instance;
  return instance;
}

std::size_t slot(DeviceType type) { return static_cast<std::size_t>(type); }

}  // namespace

std::shared_ptr<Allocator> cpu_allocator() {
  static const std::shared_ptr<Allocator> instance = std::make_shared<CpuAllocator>();
  return instance;
}

std::shared_ptr<Allocator> allocator_for(DeviceType type) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (const std::shared_ptr<Allocator>& installed = r.installed[slot(type)]) return installed;
  }
  if (type == DeviceType::kCPU) return cpu_allocator();
  if (detail::DeviceRuntime* runtime = detail::device_runtime(type)) return runtime->allocator();
  return nullptr;
}

std::shared_ptr<Allocator> set_allocator(DeviceType type, std::shared_ptr<Allocator> allocator) {
  if (type == DeviceType::kMeta) {
    throw CheckError("set_allocator: meta tensors have no memory, so meta takes no allocator");
  }
  if (allocator && allocator->device_type() != type) {
    throw CheckError("set_allocator: an allocator for " +
                     std::string(device_type_name(allocator->device_type())) + " cannot serve " +
                     std::string(device_type_name(type)));
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return std::exchange(r.installed[slot(type)], std::move(allocator));
}

}  // namespace tileops
