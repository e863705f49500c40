// Writing the generated sources of one family: its public header of op classes and the source
// that defines their constructors, call operators, op_class() and registration.
#pragma once

#include <string>
#include <vector>

#include "class_model.hpp"

namespace tileops::codegen {

struct FamilySources {
  std::string family;
  std::string manifest_file;  // as named in the generated comments, e.g. "manifest/norm.yaml"
  std::vector<ClassModel> classes;
  // Families whose op classes this family's composites hold (their headers are included).
  std::vector<std::string> stage_families;
  // When set, op_class() binds each class to the Manifest this function returns instead of the
  // builtin one (a family generated for tests).
  std::string manifest_function;
};

std::string family_header(const FamilySources& f);
std::string family_source(const FamilySources& f);
// ops/registration.cpp: register_generated_op_classes() calls each family's registration.
std::string registration_source(const std::vector<std::string>& families);
// tileops/ops.hpp: every family header.
std::string umbrella_header(const std::vector<std::string>& families);

}  // namespace tileops::codegen
