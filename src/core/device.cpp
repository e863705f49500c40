#include "tileops/core/device.hpp"

#include <charconv>
#include <limits>
#include <string>

#include "tileops/core/error.hpp"

namespace tileops {

std::string_view device_type_name(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kCUDA:
      return "cuda";
    case DeviceType::kMeta:
      return "meta";
  }
  return "unknown";
}

std::string Device::str() const {
  if (type == DeviceType::kCUDA) return "cuda:" + std::to_string(index);
  return std::string(device_type_name(type));
}

namespace {

// A canonical non-negative decimal: digits only, no sign, no leading zero (so that
// Device::parse(d.str()) == d and every device has exactly one spelling).
bool parse_index(std::string_view digits, int& index) {
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') return false;
  if (digits.size() > 1 && digits.front() == '0') return false;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, index);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::optional<Device> Device::try_parse(std::string_view text) noexcept {
  if (text == "cpu") return cpu();
  if (text == "meta") return meta();
  if (text == "cuda") return cuda(0);
  constexpr std::string_view kCudaPrefix = "cuda:";
  if (text.substr(0, kCudaPrefix.size()) == kCudaPrefix) {
    int index = 0;
    if (parse_index(text.substr(kCudaPrefix.size()), index)) return cuda(index);
  }
  return std::nullopt;
}

Device Device::parse(std::string_view text) {
  if (std::optional<Device> d = try_parse(text)) return *d;
  throw CheckError("device: cannot parse '" + std::string(text) + "'; expected " +
                   std::string(kSpellings));
}

}  // namespace tileops
