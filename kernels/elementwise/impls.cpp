// The elementwise family's implementation tables.
#include "kernels/elementwise/impls.hpp"

#include <fmt/format.h>

#include "kernels/common/cpu_kernel.hpp"
#include "kernels/elementwise/cpu/elementwise_cpu.hpp"
#include "kernels/elementwise/interface.hpp"

namespace tileops::kernels {

std::string BinaryCall::str() const {
  return fmt::format("BinaryCall(device={}, numel={}, dtype={}, broadcast={})",
                     device ? device->str() : "None", numel, dtype_name(dtype), broadcast);
}

namespace {

class AddCpuKernel final : public CpuKernel<AddCpuKernel, AddFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const Tensor& a, const Tensor& b, const Value& alpha, Tensor& out) override {
    cpu::add(a, b, alpha, out);
  }
};

class MulCpuKernel final : public CpuKernel<MulCpuKernel, MulFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  static constexpr bool general = true;
  void forward(const Tensor& a, const Tensor& b, Tensor& out) override { cpu::mul(a, b, out); }
};

}  // namespace

std::vector<KernelType> add_kernel_types() {
  return {KernelType::of<AddCpuKernel>("add_cpu", "AddCpuKernel")};
}
std::vector<KernelType> mul_kernel_types() {
  return {KernelType::of<MulCpuKernel>("mul_cpu", "MulCpuKernel")};
}

}  // namespace tileops::kernels
