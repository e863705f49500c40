// Where a tensor lives: the CPU, a CUDA device, or nowhere (meta tensors carry shape and dtype
// only).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tileops {

enum class DeviceType : std::uint8_t { kCPU, kCUDA, kMeta };

std::string_view device_type_name(DeviceType type) noexcept;

struct Device {
  DeviceType type = DeviceType::kCPU;
  // The device ordinal; always 0 for the CPU and meta.
  int index = 0;

  static constexpr Device cpu() noexcept { return {DeviceType::kCPU, 0}; }
  static constexpr Device cuda(int index = 0) noexcept { return {DeviceType::kCUDA, index}; }
  static constexpr Device meta() noexcept { return {DeviceType::kMeta, 0}; }

  bool is_cpu() const noexcept { return type == DeviceType::kCPU; }
  bool is_cuda() const noexcept { return type == DeviceType::kCUDA; }
  bool is_meta() const noexcept { return type == DeviceType::kMeta; }

  // "cpu", "cuda:0", "meta".
  std::string str() const;
  // Parses "cpu", "meta", "cuda" (index 0) and "cuda:N"; throws CheckError otherwise.
  static Device parse(std::string_view text);
  // parse(), with nullopt for a text that is none of those.
  static std::optional<Device> try_parse(std::string_view text) noexcept;
  // What parse() accepts, for messages: "'cpu', 'meta', 'cuda' or 'cuda:<index>'".
  static constexpr std::string_view kSpellings = "'cpu', 'meta', 'cuda' or 'cuda:<index>'";

  friend constexpr bool operator==(const Device&, const Device&) = default;
};

}  // namespace tileops

template <>
struct std::hash<tileops::Device> {
  std::size_t operator()(const tileops::Device& d) const noexcept {
    return (static_cast<std::size_t>(d.type) << 16) ^ static_cast<std::size_t>(d.index);
  }
};
