// The activation family's implementation table (docs/framework.md): one row per implementation.
#include "kernels/activation/cpu/activation_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/activation.hpp"

namespace tileops::kernels {

void activation_implementations(ImplementationTable& table) {
  table.add<SiluFwdOp, cpu::SiluCpuKernel>("silu_cpu");
  table.add<GeluFwdOp, cpu::GeluCpuKernel>("gelu_cpu");
  table.add<SiluAndMulFwdOp, cpu::SiluAndMulCpuKernel>("silu_and_mul_cpu");
  table.add<GeluAndMulFwdOp, cpu::GeluAndMulCpuKernel>("gelu_and_mul_cpu");
}

}  // namespace tileops::kernels
