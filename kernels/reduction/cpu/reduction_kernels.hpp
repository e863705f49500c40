// The reduction family's CPU implementations: adapters from the kernel interfaces to the
// reference functions of reduction_cpu.hpp.
#pragma once

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"
#include "kernels/reduction/interface.hpp"

namespace tileops::kernels::cpu {

class SoftmaxCpuKernel final : public CpuKernel<SoftmaxCpuKernel, SoftmaxFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, std::int64_t dim, Tensor& out) override {
    softmax(x, dim, out);
  }
};

class LogSoftmaxCpuKernel final : public CpuKernel<LogSoftmaxCpuKernel, LogSoftmaxFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, std::int64_t dim, Tensor& out) override {
    log_softmax(x, dim, out);
  }
};

class SumCpuKernel final : public CpuKernel<SumCpuKernel, SumFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const std::vector<bool>& reduced,
               Tensor& out) override {
    sum(x, reduced, out);
  }
};

class MeanCpuKernel final : public CpuKernel<MeanCpuKernel, MeanFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const std::vector<bool>& reduced,
               Tensor& out) override {
    mean(x, reduced, out);
  }
};

class AmaxCpuKernel final : public CpuKernel<AmaxCpuKernel, AmaxFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const std::vector<bool>& reduced,
               Tensor& out) override {
    amax(x, reduced, out);
  }
};

}  // namespace tileops::kernels::cpu
