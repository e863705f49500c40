#include "op/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tileops::detail {

std::string type_name(std::type_index type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

}  // namespace tileops::detail
