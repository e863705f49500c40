// The attention family's implementation tables.
#include "kernels/attention/impls.hpp"

#include <fmt/format.h>

#include "kernels/attention/cpu/attention_cpu.hpp"
#include "kernels/attention/interface.hpp"
#include "kernels/common/cpu_kernel.hpp"

namespace tileops::kernels {

std::string AlibiCall::str() const {
  return fmt::format("AlibiCall(device={}, num_heads={}, seq_len={}, dtype={})",
                     device ? device->str() : "None", num_heads, seq_len, dtype_name(dtype));
}

namespace {

class AlibiCpuKernel final : public CpuKernel<AlibiCpuKernel, AlibiFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(Tensor& out) override { cpu::alibi(call_.num_heads, call_.seq_len, out); }
};

}  // namespace

std::vector<KernelType> alibi_kernel_types() {
  return {KernelType::of<AlibiCpuKernel>("alibi_cpu", "AlibiCpuKernel")};
}

}  // namespace tileops::kernels
