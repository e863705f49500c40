// The process-wide backend registry behind backend.hpp, and target selection (docs/seeds.md,
// construction-and-calls §4).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tileops/op/backend.hpp"

namespace tileops::detail {

struct Registry {
  std::map<std::string, Detector> detectors;
  std::map<std::pair<std::string, std::string>, KernelBuilder> builders;  // (op, target)
  std::map<std::string, std::vector<KernelType>> kernel_types;            // op -> types
  std::vector<std::string> load_failures;
  std::optional<Target> default_target;
};

// Runs `f(Registry&)` under the registry's lock.
template <class F>
auto with_registry(F&& f);
std::mutex& registry_mutex();
Registry& registry_unlocked();

template <class F>
auto with_registry(F&& f) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return f(registry_unlocked());
}

// Loads the backends named by TILEOPS_BACKENDS, once per process (construction-and-calls Table 1,
// step 1).
void ensure_backends_loaded();

std::vector<KernelType> registered_kernel_types(const std::string& op);
std::optional<KernelBuilder> find_builder(const std::string& op, const std::string& target);
// "[a, b]": the targets with a builder for `op`, for messages.
std::string targets_for(const std::string& op);
// " (N backend(s) failed to load; see load_failures())" when some did, else "".
std::string load_failure_note();

// Target selection: the requested target, else the process default, else
// detection from `device`. nullopt: no decision (no device to detect from).
std::optional<Target> select_target(const std::optional<Target>& requested,
                                    const std::optional<Device>& device, const std::string& op);

}  // namespace tileops::detail
