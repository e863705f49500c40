// Reading YAML nodes strictly: scalars resolved by the YAML 1.2 core schema (yaml-cpp leaves plain
// scalars untyped), duplicate mapping keys detected (yaml-cpp accepts them silently), anchors and
// aliases found before a tree is built (Note [No anchors or aliases]).
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
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

// Note [No anchors or aliases]
//   A manifest file is plain data written out in full, so the loader refuses YAML anchors (`&a`)
//   and aliases (`*a`). yaml-cpp resolves an alias to the anchored node itself: an alias inside
//   its own anchor (`&a [*a]`) makes the tree a cycle, and aliases of aliases (`&b [*a, *a]`,
//   `&c [*b, *b]`, ...) repeat a node exponentially often, so a reader that walks values would
//   recurse until the stack overflows, or for 2^n steps. No family file needs either; without
//   them every walk over the tree is bounded by the file's size.

// Where the first anchor or alias of the document in `text` stands; nullopt when there is none.
// Throws YAML::ParserException on a syntax error, as YAML::Load would.
std::optional<YAML::Mark> first_anchor_or_alias(const std::string& text);

// The keys of a mapping node that appear more than once, in order of their second appearance.
std::vector<std::pair<std::string, YAML::Mark>> duplicate_keys(const YAML::Node& map);

}  // namespace tileops::manifest::detail
