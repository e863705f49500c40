// The references of each family, added to the table find_reference() reads (explicit
// registration: no static initialisers).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "references.hpp"

namespace tileops::references {

using ReferenceTable = std::map<std::string, Reference, std::less<>>;

void add_norm_references(ReferenceTable& table);
void add_reduction_references(ReferenceTable& table);
void add_elementwise_references(ReferenceTable& table);
void add_attention_references(ReferenceTable& table);
void add_activation_references(ReferenceTable& table);
void add_rope_references(ReferenceTable& table);
void add_gemm_references(ReferenceTable& table);

// Expected values whose tolerance scales with |value| alone.
Expected plain(std::string name, std::vector<double> values);

}  // namespace tileops::references
