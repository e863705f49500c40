#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "commands.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

void collect_devices(const OpClass& cls, std::vector<DeviceType>& out) {
  for (const KernelType& t : cls.kernel_types())
    for (DeviceType d : t.devices)
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  for (const StageDecl& s : cls.stages())
    if (const RegisteredOp* sub = find_op_class(s.op_name)) collect_devices(*sub->cls, out);
}

}  // namespace

std::vector<DeviceType> devices_of(const OpClass& cls) {
  std::vector<DeviceType> out;
  collect_devices(cls, out);
  std::sort(out.begin(), out.end());
  return out;
}

int run_list() {
  register_builtin_ops();
  const auto& m = manifest::Manifest::builtin();
  std::size_t width = 2;
  for (const auto& e : m.entries()) width = std::max(width, e->name.size());
  fmt::print("{:<{}}  {:<12}  {:<11}  {:<9}  {}\n", "op", width, "family", "status", "devices",
             "implementations");
  for (const auto& e : m.entries()) {
    std::string devices = "-";
    std::string impls = "-";
    if (const RegisteredOp* reg = find_op_class(e->name)) {
      std::vector<std::string> names;
      for (DeviceType d : devices_of(*reg->cls)) names.emplace_back(device_type_name(d));
      if (!names.empty()) devices = fmt::format("{}", fmt::join(names, ","));
      std::vector<std::string> keys;
      for (const KernelType& t : reg->cls->kernel_types()) keys.push_back(t.key);
      for (const StageDecl& s : reg->cls->stages()) keys.push_back(s.name + ":" + s.op_name);
      if (!keys.empty()) impls = fmt::format("{}", fmt::join(keys, ", "));
    }
    fmt::print("{:<{}}  {:<12}  {:<11}  {:<9}  {}\n", e->name, width, e->family, e->status, devices,
               impls);
  }
  return 0;
}

}  // namespace tileops::cli
