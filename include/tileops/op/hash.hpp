// Field-wise hashing for call specs and identities: typed cache keys, never strings or raw bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>

#include "tileops/core/device.hpp"

namespace tileops {

// One step of rustc's FxHasher: cheap (a rotate, a xor, a multiply) and good enough for cache
// keys whose tables spread the hash themselves (std::unordered_map takes it modulo a prime; the
// entry table uses its top bits).
inline void hash_mix(std::size_t& seed, std::size_t value) noexcept {
  seed = (std::rotl(seed, 5) ^ value) * 0x517cc1b727220a95ull;
}

// One field's hash. Integers and enums hash to their value and floating-point values to their
// bits, not through std::hash<double>, which hashes the bytes out of line on a path every cache
// hit takes. Adding +0.0 turns -0.0 into +0.0 (and changes nothing else), so values that compare
// equal hash alike.
template <class T>
std::size_t hash_field(const T& value) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<std::size_t>(std::bit_cast<std::uint64_t>(static_cast<double>(value) + 0.0));
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    return static_cast<std::size_t>(value);
  } else if constexpr (requires { value.hash(); }) {
    return static_cast<std::size_t>(value.hash());
  } else {
    return std::hash<T>{}(value);
  }
}

template <class... Fields>
std::size_t hash_fields(const Fields&... fields) noexcept {
  std::size_t seed = 0;
  (hash_mix(seed, hash_field(fields)), ...);
  return seed;
}

}  // namespace tileops
