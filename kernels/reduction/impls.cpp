// The reduction family's implementation table (docs/framework.md): one row per implementation.
#include "kernels/reduction/cpu/reduction_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::kernels {

void reduction_implementations(ImplementationTable& table) {
  table.add<SoftmaxFwdOp, cpu::SoftmaxCpuKernel>("softmax_cpu");
  table.add<LogSoftmaxFwdOp, cpu::LogSoftmaxCpuKernel>("log_softmax_cpu");
  table.add<SumFwdOp, cpu::SumCpuKernel>("sum_cpu");
  table.add<MeanFwdOp, cpu::MeanCpuKernel>("mean_cpu");
  table.add<AmaxFwdOp, cpu::AmaxCpuKernel>("amax_cpu");
}

}  // namespace tileops::kernels
