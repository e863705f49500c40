#include "tileops/op/accelerator.hpp"

#include <atomic>
#include <mutex>
#include <vector>

#if TILEOPS_WITH_CUDA
#include "cuda/runtime.hpp"
#endif

namespace tileops {
namespace {

// Note [Lock-free accelerator]
// Every call on a CUDA device reads the provider (its current device, its facts), so the read is
// an acquire load of a raw pointer: no mutex, no reference count bouncing between threads.
// Installing is rare (once per process, or per test), so every provider ever installed is kept
// alive until the process ends, and a pointer read before a replacement stays valid for as long
// as the reader uses it. `decided` records that the built-in provider was considered (or an
// explicit install made it moot), so the first read installs it exactly once.
struct ProviderSlot {
  std::mutex mutex;
  std::atomic<const AcceleratorProvider*> current{nullptr};
  std::atomic<bool> decided{false};
  std::shared_ptr<const AcceleratorProvider> current_shared;
  std::vector<std::shared_ptr<const AcceleratorProvider>> kept;
};

ProviderSlot& slot() {
  static ProviderSlot s;
  return s;
}

void set_locked(ProviderSlot& s, std::shared_ptr<const AcceleratorProvider> provider) {
  if (provider && (s.kept.empty() || s.kept.back() != provider)) s.kept.push_back(provider);
  s.current.store(provider.get(), std::memory_order_release);
  s.current_shared = std::move(provider);
  s.decided.store(true, std::memory_order_release);
}

// The built-in provider of this build: CUDA's when the build has the CUDA runtime and the machine
// a device; null otherwise.
std::shared_ptr<const AcceleratorProvider> builtin_provider() {
#if TILEOPS_WITH_CUDA
  if (cuda::device_count() == 0) return nullptr;
  auto p = std::make_shared<AcceleratorProvider>();
  p->type = DeviceType::kCUDA;
  p->current_device = [] { return cuda::current_device(); };
  p->set_current_device = [](int index) { cuda::set_current_device(index); };
  p->facts = [](int index) {
    const cuda::Facts& f = cuda::facts(index);
    return DeviceFacts{f.arch, f.sm_count, f.smem_optin};
  };
  p->device_count = [] { return cuda::device_count(); };
  p->default_stream = [](int index) { return cuda::default_stream(index); };
  return p;
#else
  return nullptr;
#endif
}

const AcceleratorProvider* decide_builtin() {
  ProviderSlot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.decided.load(std::memory_order_relaxed)) set_locked(s, builtin_provider());
  return s.current.load(std::memory_order_acquire);
}

}  // namespace

const AcceleratorProvider* detail::accelerator_provider() {
  ProviderSlot& s = slot();
  if (!s.decided.load(std::memory_order_acquire)) return decide_builtin();
  return s.current.load(std::memory_order_acquire);
}

void install_accelerator(std::shared_ptr<const AcceleratorProvider> provider) {
  ProviderSlot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  set_locked(s, std::move(provider));
}

std::shared_ptr<const AcceleratorProvider> accelerator() {
  detail::accelerator_provider();  // decides the built-in provider on first use
  ProviderSlot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.current_shared;
}

std::optional<Device> current_accelerator_device() {
  const AcceleratorProvider* p = detail::accelerator_provider();
  if (!p) return std::nullopt;
  return Device{p->type, p->current_device()};
}

DeviceFacts device_facts(const Device& device) {
  // The CPU and meta devices have no facts: answered without reading the provider.
  if (device.type != DeviceType::kCUDA) return {};
  const AcceleratorProvider* p = detail::accelerator_provider();
  if (!p || device.type != p->type) return {};
  return p->facts(device.index);
}

CurrentDeviceGuard::CurrentDeviceGuard(const std::optional<Device>& device) {
  if (!device) return;
  const AcceleratorProvider* p = detail::accelerator_provider();
  if (!p || device->type != p->type) return;
  const int previous = p->current_device();
  if (previous != device->index) {
    p->set_current_device(device->index);
    provider_ = p;
    previous_ = previous;
  }
}

CurrentDeviceGuard::~CurrentDeviceGuard() {
  if (!provider_) return;
  // A destructor cannot raise; restoring the device the guard found current fails only if the
  // device failed meanwhile, which the next call on it reports.
  try {
    provider_->set_current_device(previous_);
  } catch (...) {
  }
}

}  // namespace tileops
