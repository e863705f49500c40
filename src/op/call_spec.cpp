#include "tileops/op/call_spec.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

namespace tileops {

std::string AccessClass::str() const {
  return fmt::format("{}B{}", alignment, index64 ? "/int64" : "");
}

namespace detail {

std::string format_field(bool v) { return v ? "true" : "false"; }
std::string format_field(std::int64_t v) { return fmt::format("{}", v); }
std::string format_field(int v) { return fmt::format("{}", v); }
std::string format_field(std::uint64_t v) { return fmt::format("{:#x}", v); }
std::string format_field(double v) { return fmt::format("{}", v); }
std::string format_field(DType v) { return std::string(dtype_name(v)); }

std::string unqualified_type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? std::string(demangled.get()) : type.name();
  // Drop the namespaces of the type itself, not those inside its template arguments.
  const std::size_t args = name.find('<');
  const std::size_t last = name.rfind("::", args);
  return last == std::string::npos ? name : name.substr(last + 2);
}

std::string call_spec_str(std::string_view type, const std::optional<Device>& device,
                          std::string_view fields) {
  return fmt::format("{}(device={}{}{})", type, device ? device->str() : "None",
                     fields.empty() ? "" : ", ", fields);
}

}  // namespace detail
}  // namespace tileops
