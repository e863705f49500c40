// The C++ shape of one op class, derived from its manifest entry: what tileops_opgen writes for
// it. Everything here follows from the entry; nothing is chosen per op.
#pragma once

#include <string>
#include <vector>

#include "tileops/manifest/manifest.hpp"

namespace tileops::codegen {

// One construction param as a C++ constructor argument and, unless it is a construction-time
// tensor, a typed member with a read accessor of the same name.
struct ParamModel {
  std::string name;
  std::string cpp_type;      // the argument's and the member's type
  std::string default_expr;  // the argument's default; empty when the param is required
  std::string to_value;      // builds the Value the ParamMap holds from the argument `name`
  std::string from_value;    // reads the member back from `param("name")` (checked, defaulted)
  bool tensor = false;       // a construction-time tensor: passed to Op beside the ParamMap
  bool optional_tensor = false;
};

struct InputModel {
  std::string name;
  bool optional = false;
};

// A stage of a composite. A required stage whose sub-op's required params the composite declares
// too is held at construction (docs/seeds.md, composite-ops Table 1, row 1), its params taken by
// name.
struct StageModel {
  std::string name;
  std::string op;
  bool held_at_construction = false;
  std::vector<std::string> params_by_name;  // the sub-op's params the composite passes on
};

struct ClassModel {
  std::string name;
  std::string family;
  std::string ref_api;
  std::vector<std::string> summary;  // comment lines describing the signature
  std::vector<ParamModel> params;    // C++ order: required ones first, then those with defaults
  std::vector<InputModel> inputs;    // signature order
  std::vector<std::string> outputs;  // signature order
  std::vector<StageModel> stages;    // empty unless the entry has a composition
  bool composite() const noexcept { return !stages.empty(); }
  bool has_tensor_params() const noexcept;
};

// The class of `entry`. `manifest` resolves a composite's stage ops. Throws ManifestError naming
// the entry and field when the entry cannot become a class (a name that is a C++ keyword or
// clashes with a member of Op, a param type the generator does not know, ...).
ClassModel class_model(const manifest::Entry& entry, const manifest::Manifest& manifest);

}  // namespace tileops::codegen
