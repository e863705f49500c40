// Reading YAML nodes strictly: scalars resolved by the YAML 1.2 core schema (yaml-cpp leaves plain
// scalars untyped), duplicate mapping keys detected (yaml-cpp accepts them silently).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "tileops/core/value.hpp"

namespace tileops::manifest::detail {

// A scalar as the core schema reads it: quoted -> str; null/~/empty -> None; true/false -> bool;
// decimal integers -> int; decimal floats and .inf/.nan -> float; anything else -> str.
// Integers outside int64 become str so that the caller reports them.
Value resolve_scalar(const YAML::Node& node);

// A sequence or scalar node as a Value: sequences of ints -> IntList, of numbers -> FloatList,
// anything else -> Tuple. Maps are not values.
Value node_to_value(const YAML::Node& node);

// The keys of a mapping node that appear more than once, in order of their second appearance.
std::vector<std::pair<std::string, YAML::Mark>> duplicate_keys(const YAML::Node& map);

}  // namespace tileops::manifest::detail
