#include "op/backend_registry.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "tileops/core/error.hpp"

namespace tileops {
namespace detail {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

Registry& registry_unlocked() {
  static Registry r;
  return r;
}

std::vector<KernelType> registered_kernel_types(const std::string& op) {
  return with_registry([&](Registry& r) {
    auto it = r.kernel_types.find(op);
    return it == r.kernel_types.end() ? std::vector<KernelType>{} : it->second;
  });
}

std::optional<KernelBuilder> find_builder(const std::string& op, const std::string& target) {
  return with_registry([&](Registry& r) -> std::optional<KernelBuilder> {
    auto it = r.builders.find({op, target});
    if (it == r.builders.end()) return std::nullopt;
    return it->second;
  });
}

std::string targets_for(const std::string& op) {
  std::string list;
  for (const std::string& t : registered_targets(op))
    list += (list.empty() ? "'" : ", '") + t + "'";
  return "[" + list + "]";
}

std::string load_failure_note() {
  std::size_t n = with_registry([](Registry& r) { return r.load_failures.size(); });
  return n == 0 ? std::string()
                : fmt::format(" ({} backend(s) failed to load; see load_failures())", n);
}

namespace {

bool is_known(Registry& r, const std::string& name) {
  if (r.detectors.count(name)) return true;
  for (const auto& [key, builder] : r.builders)
    if (key.second == name) return true;
  return false;
}

}  // namespace

std::optional<Target> select_target(const std::optional<Target>& requested,
                                    const std::optional<Device>& device, const std::string& op) {
  if (requested) {
    if (requested->is_builtin()) return requested;
    bool known = with_registry([&](Registry& r) { return is_known(r, requested->name()); });
    if (!known)
      throw UnknownTargetError(fmt::format("{}: unknown target '{}'; known targets: {}{}", op,
                                           requested->name(), targets_for(op),
                                           load_failure_note()));
    return requested;
  }
  std::optional<Target> fallback = with_registry([](Registry& r) { return r.default_target; });
  if (fallback) return fallback;
  if (!device) return std::nullopt;
  std::map<std::string, Detector> detectors =
      with_registry([](Registry& r) { return r.detectors; });
  std::vector<std::string> claims;
  for (const auto& [name, detect] : detectors) {
    bool claimed = false;
    try {
      claimed = detect(*device);
    } catch (const std::exception& e) {
      throw BackendError(
          fmt::format("{}: the detector of target '{}' raised: {}", op, name, e.what()));
    }
    if (claimed) claims.push_back(name);
  }
  if (claims.size() > 1) {
    std::string list;
    for (const auto& c : claims) list += (list.empty() ? "'" : ", '") + c + "'";
    throw AmbiguousTargetError(fmt::format("{}: targets [{}] all claim {}; pass target= to choose",
                                           op, list, device->str()));
  }
  if (claims.size() == 1) return Target::named(claims[0]);
  return Target::builtin();
}

}  // namespace detail

void register_detector(const std::string& target, Detector detect) {
  detail::with_registry([&](detail::Registry& r) {
    if (!r.detectors.emplace(target, std::move(detect)).second)
      throw BackendError(fmt::format("a detector for target '{}' is already registered", target));
  });
}

void register_kernel_builder(const std::string& op, const std::string& target,
                             KernelBuilder build) {
  detail::with_registry([&](detail::Registry& r) {
    if (!r.builders.emplace(std::make_pair(op, target), std::move(build)).second)
      throw BackendError(
          fmt::format("target '{}' already registers a kernel builder for {}", target, op));
  });
}

void register_kernel_type(const std::string& op, KernelType type) {
  detail::with_registry([&](detail::Registry& r) {
    auto& types = r.kernel_types[op];
    for (const KernelType& t : types)
      if (t.key == type.key)
        throw BackendError(
            fmt::format("an implementation '{}' is already registered for {}", type.key, op));
    types.push_back(std::move(type));
  });
}

void set_default_target(std::optional<Target> target) {
  detail::with_registry([&](detail::Registry& r) {
    if (target && !target->is_builtin() && !detail::is_known(r, target->name()))
      throw UnknownTargetError(
          fmt::format("set_default_target: unknown target '{}'", target->name()));
    r.default_target = std::move(target);
  });
}

std::optional<Target> default_target() {
  return detail::with_registry([](detail::Registry& r) { return r.default_target; });
}

std::vector<std::string> registered_targets(const std::optional<std::string>& op) {
  return detail::with_registry([&](detail::Registry& r) {
    std::vector<std::string> out;
    auto add = [&](const std::string& t) {
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    };
    if (!op)
      for (const auto& [name, d] : r.detectors) add(name);
    for (const auto& [key, b] : r.builders)
      if (!op || key.first == *op) add(key.second);
    std::sort(out.begin(), out.end());
    return out;
  });
}

std::vector<std::string> load_failures() {
  return detail::with_registry([](detail::Registry& r) { return r.load_failures; });
}

}  // namespace tileops
