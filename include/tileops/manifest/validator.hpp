// The manifest validator (`tileops validate`): everything a manifest must satisfy beyond parsing.
#pragma once

#include <string>
#include <vector>

#include "tileops/manifest/manifest.hpp"

namespace tileops::manifest {

// Checks every entry of `m` and returns one diagnostic per problem, sorted; empty when valid:
// - every expression compiles (names resolvable, kinds right) and every index is solvable at
//   every presence point (an inference plan exists);
// - effects are consistent (write_only needs mutated, aliases name written inputs, one out buffer);
// - dtype_combos rows name DType indices or dtype params with allowed values, distinct rows;
// - workloads: required params given, exactly the free shape indices given, dtype_cases covering
//   the DType indices, `some` naming optional inputs, distinct case ids, every optional input
//   passed in one row and omitted in another, and every row instantiating and passing the call
//   check with the indices it gave, with a roofline that evaluates;
// - composition: stages non-empty with unique names, each naming an op of the manifest.
std::vector<std::string> validate(const Manifest& m);

// Loads the files strictly and validates them together; loader diagnostics come first.
std::vector<std::string> validate_files(const std::vector<std::string>& paths);

// The embedded manifest's files, loaded strictly and validated.
std::vector<std::string> validate_builtin();

}  // namespace tileops::manifest
