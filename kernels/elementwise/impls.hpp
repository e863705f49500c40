// The elementwise family's implementation tables.
#pragma once

#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

std::vector<KernelType> add_kernel_types();
std::vector<KernelType> mul_kernel_types();

}  // namespace tileops::kernels
