// The elementwise family's CPU implementations: adapters from the kernel interfaces to the
// reference functions of elementwise_cpu.hpp, which read contiguous inputs: the op hands its
// inputs over as the caller's views (src/ops/elementwise/binary.cpp), so a strided one is copied
// here.
#pragma once

#include <optional>

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/elementwise/cpu/elementwise_cpu.hpp"
#include "kernels/elementwise/interface.hpp"

namespace tileops::kernels::cpu {

// `t` itself when contiguous, else a contiguous copy this object owns.
class ContiguousView {
 public:
  explicit ContiguousView(const Tensor& t) {
    if (!t.is_contiguous()) copy_ = t.contiguous();
    tensor_ = copy_ ? &*copy_ : &t;
  }
  const Tensor& operator*() const noexcept { return *tensor_; }

 private:
  std::optional<Tensor> copy_;
  const Tensor* tensor_ = nullptr;
};

class AddCpuKernel final : public CpuKernel<AddCpuKernel, AddFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, const Value& alpha,
               Tensor& out) override {
    add(*ContiguousView(a), *ContiguousView(b), alpha, out);
  }
};

class MulCpuKernel final : public CpuKernel<MulCpuKernel, MulFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const KernelContext&, const Tensor& a, const Tensor& b, Tensor& out) override {
    mul(*ContiguousView(a), *ContiguousView(b), out);
  }
};

}  // namespace tileops::kernels::cpu
