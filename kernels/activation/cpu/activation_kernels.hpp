// The activation family's CPU implementations: adapters from the kernel interfaces to the
// functions of activation_cpu.hpp.
#pragma once

#include "kernels/activation/cpu/activation_cpu.hpp"
#include "kernels/activation/interface.hpp"
#include "kernels/common/cpu/cpu_kernel.hpp"

namespace tileops::kernels::cpu {

class SiluCpuKernel final : public CpuKernel<SiluCpuKernel, SiluFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, Tensor& out) override { silu(x, out); }
};

class GeluCpuKernel final : public CpuKernel<GeluCpuKernel, GeluFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, Tensor& out) override {
    gelu(x, call_.tanh, out);
  }
};

class SiluAndMulCpuKernel final : public CpuKernel<SiluAndMulCpuKernel, SiluAndMulFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, Tensor& out) override {
    silu_and_mul(x, out);
  }
};

class GeluAndMulCpuKernel final : public CpuKernel<GeluAndMulCpuKernel, GeluAndMulFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, Tensor& out) override {
    gelu_and_mul(x, call_.tanh, out);
  }
};

}  // namespace tileops::kernels::cpu
