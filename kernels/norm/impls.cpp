// The norm family's implementation tables (STYLE.md habit 2: readable in one screen). Precedence
// is declared by each implementation (general, preferred_over), never by the order here.
#include "kernels/norm/impls.hpp"

#include <fmt/format.h>

#include "kernels/norm/cpu/norm_kernels.hpp"

namespace tileops::kernels {

std::string NormCall::str() const {
  return fmt::format("NormCall(device={}, n={}, eps={}, dtype={}, has_weight={}, has_bias={})",
                     device ? device->str() : "None", n, eps, dtype_name(dtype), has_weight,
                     has_bias);
}

std::vector<KernelType> rms_norm_kernel_types() {
  return {
      KernelType::of<cpu::RMSNormRowwiseKernel>("rms_norm_rowwise_cpu", "RMSNormRowwiseKernel"),
      KernelType::of<cpu::RMSNormBlockedKernel>("rms_norm_blocked_cpu", "RMSNormBlockedKernel"),
  };
}

std::vector<KernelType> layer_norm_kernel_types() {
  return {KernelType::of<cpu::LayerNormCpuKernel>("layer_norm_cpu", "LayerNormCpuKernel")};
}

std::vector<KernelType> fused_add_rms_norm_kernel_types() {
  return {KernelType::of<cpu::FusedAddRMSNormCpuKernel>("fused_add_rms_norm_cpu",
                                                        "FusedAddRMSNormCpuKernel")};
}

}  // namespace tileops::kernels
