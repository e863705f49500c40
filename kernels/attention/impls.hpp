// The attention family's implementation tables.
#pragma once

#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

std::vector<KernelType> alibi_kernel_types();

}  // namespace tileops::kernels
