// The readable (demangled) name of a C++ type, for error messages that name interfaces and op
// classes by their type.
#pragma once

#include <string>
#include <typeindex>

namespace tileops::detail {

// "tileops::kernels::RMSNormFwdInterface"; the mangled name when demangling fails.
std::string type_name(std::type_index type);

}  // namespace tileops::detail
