// Param types (docs/manifest.md §2): parsing a declared type and checking a value against it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tileops/core/value.hpp"
#include "tileops/manifest/model.hpp"

namespace tileops::manifest {

// Parses "int", "float", "bool", "str", "list[int]", "list[float]", "dtype", "int | float",
// "'a' | 'b'", "float16 | bfloat16" and any of these with "| None". nullopt when unknown.
std::optional<ParamType> parse_param_type(std::string_view text);

// Converts `value` to the canonical form of `type` (an int given for a float param becomes a
// float; a string naming a dtype becomes a DType), or returns nullopt when it does not fit.
// Non-finite floats do not fit: no param of ours means anything with them.
std::optional<Value> conform_param_value(const ParamType& type, const Value& value);

}  // namespace tileops::manifest
