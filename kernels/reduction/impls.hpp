// The reduction family's implementation tables.
#pragma once

#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

std::vector<KernelType> softmax_kernel_types();
std::vector<KernelType> sum_kernel_types();

}  // namespace tileops::kernels
