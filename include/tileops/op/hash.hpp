// Field-wise hashing for call specs and identities (STYLE.md habit 6: typed cache keys).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "tileops/core/device.hpp"

namespace tileops {

inline void hash_mix(std::size_t& seed, std::size_t value) noexcept {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

template <class... Fields>
std::size_t hash_fields(const Fields&... fields) noexcept {
  std::size_t seed = 0;
  (hash_mix(seed, std::hash<Fields>{}(fields)), ...);
  return seed;
}

}  // namespace tileops
