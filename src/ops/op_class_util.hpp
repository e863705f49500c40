// Building an OpClass from an implementation table.
#pragma once

#include <vector>

#include "tileops/op/op_class.hpp"

namespace tileops::ops {

inline OpClass with_kernel_types(OpClass cls, const std::vector<KernelType>& types) {
  for (const KernelType& t : types) cls.kernel_type(t);
  return cls;
}

}  // namespace tileops::ops
