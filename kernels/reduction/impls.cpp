// The reduction family's implementation table (STYLE.md habit 2): one row per implementation.
#include "kernels/reduction/cpu/reduction_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::kernels {

void reduction_implementations(ImplementationTable& table) {
  table.add<SoftmaxFwdOp, cpu::SoftmaxCpuKernel>("softmax_cpu");
  table.add<SumFwdOp, cpu::SumCpuKernel>("sum_cpu");
}

}  // namespace tileops::kernels
