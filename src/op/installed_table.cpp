#include "op/installed_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "tileops/core/error.hpp"

namespace tileops {

namespace {

// Availability with the kind of its refusal: the device type first, then the architecture.
std::optional<std::pair<VerdictKind, std::string>> availability(const KernelType& type,
                                                                DeviceType device,
                                                                const DeviceFacts& facts) {
  if (std::find(type.devices.begin(), type.devices.end(), device) == type.devices.end()) {
    std::string list;
    for (DeviceType d : type.devices)
      list += (list.empty() ? "" : ", ") + std::string(device_type_name(d));
    return std::pair(VerdictKind::kWrongDevice,
                     fmt::format("runs on [{}], not {}", list, device_type_name(device)));
  }
  if (device == DeviceType::kCUDA && type.supported_archs &&
      std::find(type.supported_archs->begin(), type.supported_archs->end(), facts.arch) ==
          type.supported_archs->end()) {
    std::string list;
    for (int a : *type.supported_archs) list += (list.empty() ? "" : ", ") + std::to_string(a);
    return std::pair(
        VerdictKind::kWrongArch,
        fmt::format("built for architectures [{}], device reports {}", list, facts.arch));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unavailable(const KernelType& type, DeviceType device,
                                       const DeviceFacts& facts) {
  if (auto a = availability(type, device, facts)) return std::move(a->second);
  return std::nullopt;
}

namespace detail {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "'" : ", '") + i + "'";
  return "[" + s + "]";
}

}  // namespace

InstalledTable InstalledTable::install(const OpClass& cls, std::vector<KernelType> registered) {
  InstalledTable t;
  const std::string& op = cls.name();
  std::vector<std::string> reused;
  for (const KernelType& r : registered)
    for (const KernelType& own : cls.kernel_types())
      if (own.key == r.key) reused.push_back(r.key);
  if (!reused.empty())
    throw ContractError(
        fmt::format("implementations registered for {} reuse keys it has: {}", op, join(reused)));
  t.types = cls.kernel_types();
  for (KernelType& r : registered) t.types.push_back(std::move(r));
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < t.types.size(); ++i) {
    if (!index.emplace(t.types[i].key, static_cast<int>(i)).second)
      throw ContractError(fmt::format("{} installs the key '{}' twice", op, t.types[i].key));
  }
  std::vector<bool> claimed(t.types.size(), false);
  for (const InterfaceDecl& decl : cls.interfaces()) {
    InstalledInterface ii{&decl, {}};
    int generals = 0;
    for (std::size_t i = 0; i < t.types.size(); ++i) {
      const KernelType& k = t.types[i];
      if (k.interface_type != decl.interface_type) continue;
      if (k.call_type != decl.call_type)
        throw ContractError(fmt::format("{}: {} ('{}') does not take {}'s call spec", op,
                                        k.class_name, k.key, decl.name));
      ii.keys.push_back(static_cast<int>(i));
      claimed[i] = true;
      generals += k.general ? 1 : 0;
    }
    if (generals > 1)
      throw ContractError(fmt::format("{}: interface '{}' has more than one general implementation",
                                      op, decl.name));
    for (int i : ii.keys) {
      const KernelType& k = t.types[i];
      if (k.general && !k.preferred_over.empty())
        throw ContractError(fmt::format(
            "{}: {} ('{}') is general and is preferred over {}; a general implementation "
            "ranks below every other and declares no preference",
            op, k.class_name, k.key, join(k.preferred_over)));
      std::vector<std::string> foreign;
      for (const std::string& p : k.preferred_over) {
        auto it = index.find(p);
        bool same_interface = it != index.end() && it->second != i &&
                              t.types[it->second].interface_type == k.interface_type;
        if (!same_interface) foreign.push_back(p);
      }
      if (!foreign.empty())
        throw ContractError(
            fmt::format("{}: {} ('{}') is preferred over {}; preferred_over names only other "
                        "implementations of interface '{}'",
                        op, k.class_name, k.key, join(foreign), decl.name));
    }
    t.interfaces.push_back(std::move(ii));
  }
  std::vector<std::string> orphans;
  for (std::size_t i = 0; i < t.types.size(); ++i)
    if (!claimed[i]) orphans.push_back(t.types[i].key);
  if (!orphans.empty())
    throw ContractError(
        fmt::format("{} keys implement none of its kernel interfaces: {}", op, join(orphans)));

  // Transitive closure of preferred_over; a key in its own closure is a cycle.
  const std::size_t n = t.types.size();
  t.beats.assign(n, std::vector<bool>(n, false));
  for (std::size_t a = 0; a < n; ++a)
    for (const std::string& p : t.types[a].preferred_over) t.beats[a][index.at(p)] = true;
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t a = 0; a < n; ++a)
      if (t.beats[a][k])
        for (std::size_t b = 0; b < n; ++b)
          if (t.beats[k][b]) t.beats[a][b] = true;
  for (std::size_t a = 0; a < n; ++a)
    if (t.beats[a][a])
      throw ContractError(
          fmt::format("{}: preferences form a cycle through '{}'", op, t.types[a].key));
  return t;
}

InstalledTable::Choice InstalledTable::choose(int interface, const void* call,
                                              const DeviceFacts& facts,
                                              const std::string& force) const {
  Choice c;
  const InstalledInterface& ii = interfaces[interface];
  const CallSpecBase& base = ii.decl->call_ops->base(call);
  bool device_listed = false;  // some key lists the call's device type
  bool force_refused = false;
  std::vector<int> candidates;
  for (int i : ii.keys) {
    const KernelType& k = types[i];
    ImplementationVerdict& v = c.verdicts.emplace_back();
    v.key = k.key;
    v.class_name = k.class_name;
    std::optional<std::pair<VerdictKind, std::string>> refused;
    if (base.device) {
      if (std::find(k.devices.begin(), k.devices.end(), base.device->type) != k.devices.end())
        device_listed = true;
      refused = availability(k, base.device->type, facts);
    } else {
      refused = std::pair(VerdictKind::kWrongDevice, std::string("the call device is unknown"));
    }
    if (!refused)
      if (std::optional<std::string> reason = k.refusal(call))
        refused = std::pair(VerdictKind::kRefuses, std::move(*reason));
    if (refused) {
      v.kind = refused->first;
      v.reason = std::move(refused->second);
      force_refused = force_refused || k.key == force;
      continue;
    }
    if (!force.empty() && k.key != force) {
      v.kind = VerdictKind::kForcedAway;
      continue;
    }
    candidates.push_back(i);
  }
  std::vector<int> winners;
  for (int k : candidates) {
    bool beaten = false;
    for (int o : candidates) {
      if (o == k) continue;
      if (beats[o][k] || (types[k].general && !types[o].general)) beaten = true;
    }
    if (!beaten) winners.push_back(k);
  }
  // The order of the errors select_key raises: a forced key's refusal names the one key the user
  // asked for, so it comes before what the rest of the table says.
  if (winners.size() == 1) {
    c.outcome = DispatchOutcome::kSelected;
    c.winner = winners[0];
  } else if (force_refused) {
    c.outcome = DispatchOutcome::kForcedKeyRefuses;
  } else if (winners.size() > 1) {
    c.outcome = DispatchOutcome::kAmbiguous;
    c.ambiguous = std::move(winners);
  } else if (!device_listed && !c.verdicts.empty()) {
    c.outcome = DispatchOutcome::kNotOnDevice;
  } else {
    c.outcome = DispatchOutcome::kNothingServes;
  }
  return c;
}

}  // namespace detail
}  // namespace tileops
