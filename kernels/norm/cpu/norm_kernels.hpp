// The norm family's CPU implementations: adapters from the kernel interfaces to the reference
// functions of norm_cpu.hpp, with their applicability and precedence.
#pragma once

#include <fmt/format.h>

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/norm/cpu/norm_cpu.hpp"
#include "kernels/norm/interface.hpp"

namespace tileops::kernels::cpu {

// Serves every RMSNorm call on the CPU; the fallback.
class RMSNormRowwiseKernel final : public CpuKernel<RMSNormRowwiseKernel, RMSNormFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const Tensor* weight, Tensor& out) override {
    rms_norm_rowwise(x, weight, call_.eps, call_.n, out);
  }
};

// Long rows in blocks; refuses the short rows its layout does not pay off for.
class RMSNormBlockedKernel final : public CpuKernel<RMSNormBlockedKernel, RMSNormFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr std::int64_t kMinRow = 1024;
  static std::optional<std::string> refusal(const NormCall& call) {
    if (call.n < kMinRow)
      return fmt::format("rows of {} elements are shorter than the {} it is built for", call.n,
                         kMinRow);
    return std::nullopt;
  }
  void forward(const KernelContext&, const Tensor& x, const Tensor* weight, Tensor& out) override {
    rms_norm_blocked(x, weight, call_.eps, call_.n, out);
  }
};

class LayerNormCpuKernel final : public CpuKernel<LayerNormCpuKernel, LayerNormFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, const Tensor* weight, const Tensor* bias,
               Tensor& out) override {
    layer_norm(x, weight, bias, call_.eps, call_.n, out);
  }
};

class FusedAddRMSNormCpuKernel final
    : public CpuKernel<FusedAddRMSNormCpuKernel, FusedAddRMSNormFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& x, Tensor& residual, const Tensor& weight,
               Tensor& out) override {
    fused_add_rms_norm(x, residual, weight, call_.eps, call_.n, out);
  }
};

}  // namespace tileops::kernels::cpu
