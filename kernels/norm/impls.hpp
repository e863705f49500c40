// The norm family's implementation tables, one per op: every candidate, with its key.
#pragma once

#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

std::vector<KernelType> rms_norm_kernel_types();
std::vector<KernelType> layer_norm_kernel_types();
std::vector<KernelType> fused_add_rms_norm_kernel_types();

}  // namespace tileops::kernels
