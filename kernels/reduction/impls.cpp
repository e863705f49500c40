// The reduction family's implementation tables.
#include "kernels/reduction/impls.hpp"

#include <fmt/format.h>

#include "kernels/common/cpu_kernel.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"
#include "kernels/reduction/interface.hpp"

namespace tileops::kernels {

std::string SoftmaxCall::str() const {
  return fmt::format("SoftmaxCall(device={}, outer={}, axis={}, inner={}, dtype={})",
                     device ? device->str() : "None", outer, axis, inner, dtype_name(dtype));
}

std::string SumCall::str() const {
  return fmt::format("SumCall(device={}, numel={}, rank={}, reduced_mask={:#x}, dtype={})",
                     device ? device->str() : "None", numel, rank, reduced_mask, dtype_name(dtype));
}

namespace {

class SoftmaxCpuKernel final : public CpuKernel<SoftmaxCpuKernel, SoftmaxFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const Tensor& x, std::int64_t dim, Tensor& out) override {
    cpu::softmax(x, dim, out);
  }
};

class SumCpuKernel final : public CpuKernel<SumCpuKernel, SumFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) override {
    cpu::sum(x, reduced, out);
  }
};

}  // namespace

std::vector<KernelType> softmax_kernel_types() {
  return {KernelType::of<SoftmaxCpuKernel>("softmax_cpu", "SoftmaxCpuKernel")};
}

std::vector<KernelType> sum_kernel_types() {
  return {KernelType::of<SumCpuKernel>("sum_cpu", "SumCpuKernel")};
}

}  // namespace tileops::kernels
