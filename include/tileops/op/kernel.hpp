// Kernels and kernel interfaces (docs/seeds.md, construction-and-calls §4-§5; docs/framework.md,
// Kernel selection).
//
// A kernel interface is one place where an op calls a kernel. It declares its call spec type
// (`using Call = ...`) and a pure virtual `forward` with the contract's arguments. An
// implementation derives from Kernel and from its interface, and declares, as static members
// hiding Kernel's defaults: `devices()`, `supported_archs()`, `general`, `preferred_over()`,
// `refusal(call)` and `entry_for(call)`. KernelType::of<Impl>("key") reads those declarations;
// the concept KernelImplementation checks them at compile time.
#pragma once

#include <atomic>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/identity.hpp"

namespace tileops {

// What every kernel interface's forward receives before its tensors: the call's device, the
// stream its work goes to (a kernel launches on it, allocates on it and never synchronises the
// host), and the device's facts. Part of the backend ABI (kBackendAbiVersion).
struct KernelContext {
  Device device = Device::cpu();
  Stream stream;
  DeviceFacts facts;
};

// Base of every kernel interface.
class KernelInterface {
 public:
  virtual ~KernelInterface() = default;
};

struct KernelType;

// Base of every kernel implementation. The static members are the defaults an implementation
// hides with its own declarations.
class Kernel {
 public:
  virtual ~Kernel() = default;

  // Puts the kernel in tuned mode; idempotent. Kernels that tune override on_tune_request(),
  // which runs with the device the entry was built for made current (Note [Tuning on the entry's
  // device] in src/op/kernel.cpp), whoever asks and whenever.
  void request_tune();
  bool tune_requested() const noexcept { return tune_requested_.load(); }
  // The device of the call spec the entry was built for (set by the framework when it builds the
  // entry through its KernelType; nullopt for an entry built any other way).
  const std::optional<Device>& device() const noexcept { return device_; }
  // What the entry chose inside itself, for `tileops explain` and the built-entry listings (a
  // library kernel's algorithm, tuned or from a heuristic); empty when it has no choice to show.
  virtual std::string detail() const { return {}; }

  static std::vector<DeviceType> devices() { return {DeviceType::kCUDA}; }
  static std::optional<std::vector<int>> supported_archs() { return std::nullopt; }
  static constexpr bool general = false;
  static std::vector<std::string> preferred_over() { return {}; }
  template <class Call>
  static std::optional<std::string> refusal(const Call&) {
    return std::nullopt;
  }

 protected:
  virtual void on_tune_request() {}

 private:
  friend struct KernelType;
  std::atomic<bool> tune_requested_{false};
  std::optional<Device> device_;
};

// What entry_for returns: the build identity and the builder of the entry.
template <class I>
struct EntryRecipe {
  Identity identity;
  std::function<std::shared_ptr<I>()> build;
};

// The default entry_for: identity = the call spec, entry = Impl(call).
template <class Impl, class Call>
EntryRecipe<typename Impl::Interface> entry_per_call(const Call& call) {
  return {Identity(call), [call] { return std::make_shared<Impl>(call); }};
}

template <class Impl>
concept KernelImplementation = std::derived_from<Impl, Kernel> &&
    std::derived_from<typename Impl::Interface, KernelInterface> &&
    std::derived_from<Impl, typename Impl::Interface> && CallSpec<typename Impl::Interface::Call> &&
    requires(const typename Impl::Interface::Call& call) {
  { Impl::devices() } -> std::convertible_to<std::vector<DeviceType>>;
  { Impl::supported_archs() } -> std::convertible_to<std::optional<std::vector<int>>>;
  { Impl::general } -> std::convertible_to<bool>;
  { Impl::preferred_over() } -> std::convertible_to<std::vector<std::string>>;
  { Impl::refusal(call) } -> std::convertible_to<std::optional<std::string>>;
  { Impl::entry_for(call) } -> std::same_as<EntryRecipe<typename Impl::Interface>>;
};

// The implementation table's row for one key: the declarations of one implementation class,
// type-erased over its call spec (a `const void*` that points to the interface's Call).
struct KernelType {
  std::string key;         // stable snake_case name: logs, TILEOPS_FORCE, benchmarks, tests
  std::string class_name;  // for messages
  std::type_index interface_type = typeid(void);
  std::type_index call_type = typeid(void);
  std::vector<DeviceType> devices;
  std::optional<std::vector<int>> supported_archs;
  bool general = false;
  std::vector<std::string> preferred_over;
  std::function<std::optional<std::string>(const void* call)> refusal;
  // Returns the identity and a builder whose entry is the interface, erased to KernelInterface.
  std::function<EntryRecipe<KernelInterface>(const void* call)> entry_for;

  // The row of `Impl` under `key`; its class name is read from the type.
  template <KernelImplementation Impl>
  static KernelType of(std::string key) {
    using I = typename Impl::Interface;
    using Call = typename I::Call;
    KernelType t;
    t.key = std::move(key);
    t.class_name = detail::unqualified_type_name(typeid(Impl));
    t.interface_type = typeid(I);
    t.call_type = typeid(Call);
    t.devices = Impl::devices();
    t.supported_archs = Impl::supported_archs();
    t.general = Impl::general;
    t.preferred_over = Impl::preferred_over();
    t.refusal = [](const void* c) { return Impl::refusal(*static_cast<const Call*>(c)); };
    t.entry_for = [](const void* c) -> EntryRecipe<KernelInterface> {
      const Call& call = *static_cast<const Call*>(c);
      EntryRecipe<I> r = Impl::entry_for(call);
      return {
          std::move(r.identity),
          [build = std::move(r.build), device = call.device]() -> std::shared_ptr<KernelInterface> {
            std::shared_ptr<I> entry = build();
            if (auto* kernel = dynamic_cast<Kernel*>(entry.get()); kernel && !kernel->device_)
              kernel->device_ = device;
            return entry;
          }};
    };
    return t;
  }
};

// Availability of a kernel type on a device (docs/framework.md, Kernel selection): the device
// type, then the architecture. nullopt when available.
std::optional<std::string> unavailable(const KernelType& type, DeviceType device,
                                       const DeviceFacts& facts);

}  // namespace tileops
