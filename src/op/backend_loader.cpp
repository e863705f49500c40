// Shared-library backends: dlopen, the declared ABI version, the exported registration function,
// all-or-nothing publication, and dlclose for a backend that did not register.
#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>

#include "op/backend_registry.hpp"
#include "op/type_name.hpp"
#include "tileops/core/error.hpp"

namespace tileops {
namespace {

// Stages a backend's registrations; publish() checks them against the registry and adds them
// all, or none.
class StagingRegistrar final : public BackendRegistrar {
 public:
  void detector(const std::string& target, Detector detect) override {
    detectors_.emplace_back(target, std::move(detect));
  }
  void kernel_builder(const std::string& op, const std::string& target,
                      KernelBuilder build) override {
    builders_.emplace_back(std::make_pair(op, target), std::move(build));
  }
  void kernel_type(const std::string& op, KernelType type) override {
    types_.emplace_back(op, std::move(type));
  }

  void publish(detail::Registry& r) {
    for (const auto& [target, d] : detectors_)
      if (r.detectors.count(target))
        throw BackendError(fmt::format("a detector for target '{}' is already registered", target));
    for (const auto& [key, b] : builders_)
      if (r.builders.count(key))
        throw BackendError(fmt::format("target '{}' already registers a kernel builder for {}",
                                       key.second, key.first));
    for (const auto& [op, t] : types_)
      for (const KernelType& existing : r.kernel_types[op])
        if (existing.key == t.key)
          throw BackendError(
              fmt::format("an implementation '{}' is already registered for {}", t.key, op));
    for (auto& [target, d] : detectors_) r.detectors.emplace(target, std::move(d));
    for (auto& [key, b] : builders_) r.builders.emplace(key, std::move(b));
    for (auto& [op, t] : types_) r.kernel_types[op].push_back(std::move(t));
  }

 private:
  std::vector<std::pair<std::string, Detector>> detectors_;
  std::vector<std::pair<std::pair<std::string, std::string>, KernelBuilder>> builders_;
  std::vector<std::pair<std::string, KernelType>> types_;
};

[[noreturn]] void fail_load(const std::string& path, const std::string& why) {
  std::string line = fmt::format("{}: {}", path, why);
  detail::with_registry([&](detail::Registry& r) { r.load_failures.push_back(line); });
  throw BackendError("load_backend: " + line);
}

// Registers the backend `handle` holds; why it did not, or nullopt. Nothing the backend made
// outlives this function (the staged callables, an exception it threw) unless it was published,
// so that a backend refused here can be unloaded.
std::optional<std::string> register_backend(void* handle) {
  const auto* version = static_cast<const int*>(dlsym(handle, "tileops_backend_abi_version"));
  if (!version) return "exports no tileops_backend_abi_version";
  if (*version != kBackendAbiVersion)
    return fmt::format("built for backend ABI version {}; this library loads version {}", *version,
                       kBackendAbiVersion);
  auto fn =
      reinterpret_cast<tileops_backend_register_fn>(dlsym(handle, "tileops_backend_register"));
  if (!fn) return "exports no tileops_backend_register";
  StagingRegistrar staging;
  int rc = 0;
  try {
    rc = fn(&staging, kBackendAbiVersion);
  } catch (const std::exception& e) {
    return fmt::format("registration raised: {}", e.what());
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    return fmt::format("registration raised a {}, which is not a std::exception",
                       type ? detail::type_name(*type) : std::string("foreign exception"));
  }
  if (rc != 0) return fmt::format("registration refused (code {})", rc);
  try {
    detail::with_registry([&](detail::Registry& r) { staging.publish(r); });
  } catch (const BackendError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace

void load_backend(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail_load(path, fmt::format("cannot load: {}", dlerror()));
  if (std::optional<std::string> why = register_backend(handle)) {
    dlclose(handle);
    fail_load(path, *why);
  }
  // A backend that registered stays loaded for the life of the process: its code backs the
  // registered callables.
}

namespace detail {

void ensure_backends_loaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("TILEOPS_BACKENDS");
    if (!env || !*env) return;
    std::stringstream paths(env);
    std::string path;
    while (std::getline(paths, path, ':')) {
      if (path.empty()) continue;
      try {
        load_backend(path);
      } catch (const BackendError&) {
        // Recorded in load_failures(); errors about targets mention it.
      }
    }
  });
}

}  // namespace detail
}  // namespace tileops
