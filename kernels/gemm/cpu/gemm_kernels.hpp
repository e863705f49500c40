// The gemm family's CPU implementations: adapters from the kernel interfaces to the OpenBLAS
// kernels of gemm_cpu.hpp. Each serves every call of its op on the CPU.
#pragma once

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/gemm/cpu/gemm_cpu.hpp"
#include "kernels/gemm/interface.hpp"

namespace tileops::kernels::cpu {

class GemmCpuKernel final : public CpuKernel<GemmCpuKernel, GemmFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, const Tensor* bias,
               Tensor& out) override {
    gemm(a, b, bias, out);
  }
};

class BmmCpuKernel final : public CpuKernel<BmmCpuKernel, BmmFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, Tensor& out) override {
    bmm(a, b, out);
  }
};

class GroupedGemmCpuKernel final : public CpuKernel<GroupedGemmCpuKernel, GroupedGemmFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const Tensor& w, const Tensor& offsets,
               Tensor& out) override {
    grouped_gemm(x, w, offsets, out);
  }
};

}  // namespace tileops::kernels::cpu
