// The attention family's CPU implementations: adapters from the kernel interfaces to the
// reference functions of attention_cpu.hpp.
#pragma once

#include "kernels/attention/cpu/attention_cpu.hpp"
#include "kernels/attention/interface.hpp"
#include "kernels/common/cpu/cpu_kernel.hpp"

namespace tileops::kernels::cpu {

class AlibiCpuKernel final : public CpuKernel<AlibiCpuKernel, AlibiFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, Tensor& out) override {
    alibi(out.shape()[0], out.shape()[1], out);
  }
};

}  // namespace tileops::kernels::cpu
