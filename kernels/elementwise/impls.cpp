// The elementwise family's implementation table (STYLE.md habit 2): one row per implementation.
#include "kernels/elementwise/cpu/elementwise_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops::kernels {

void elementwise_implementations(ImplementationTable& table) {
  table.add<AddFwdOp, cpu::AddCpuKernel>("add_cpu");
  table.add<MulFwdOp, cpu::MulCpuKernel>("mul_cpu");
}

}  // namespace tileops::kernels
