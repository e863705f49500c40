// The elementwise family's CPU implementations: adapters from the kernel interfaces to the
// reference functions of elementwise_cpu.hpp.
#pragma once

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/elementwise/cpu/elementwise_cpu.hpp"
#include "kernels/elementwise/interface.hpp"

namespace tileops::kernels::cpu {

class AddCpuKernel final : public CpuKernel<AddCpuKernel, AddFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, const Value& alpha,
               Tensor& out) override {
    add(a, b, alpha, out);
  }
};

class MulCpuKernel final : public CpuKernel<MulCpuKernel, MulFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, Tensor& out) override {
    mul(a, b, out);
  }
};

}  // namespace tileops::kernels::cpu
