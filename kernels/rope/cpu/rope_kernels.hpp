// The rope family's CPU implementation: an adapter from the kernel interface to the reference
// function of rope_cpu.hpp.
#pragma once

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/rope/cpu/rope_cpu.hpp"
#include "kernels/rope/interface.hpp"

namespace tileops::kernels::cpu {

// Serves every rotary embedding call on the CPU.
class RopeCpuKernel final : public CpuKernel<RopeCpuKernel, RopeFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& positions, const Tensor& query,
               const Tensor& key, const Tensor& cos_sin_cache) override {
    rope(positions, query, key, cos_sin_cache, call_.is_neox);
  }
};

}  // namespace tileops::kernels::cpu
