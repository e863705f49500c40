// The reduction family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/reduction/cpu/reduction_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/reduction.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/reduction/cuda/reduction_kernels.hpp"
#endif

namespace tileops::kernels {

void reduction_implementations(ImplementationTable& table) {
  table.add<SoftmaxFwdOp, cpu::SoftmaxCpuKernel>("softmax_cpu");
  table.add<LogSoftmaxFwdOp, cpu::LogSoftmaxCpuKernel>("log_softmax_cpu");
  table.add<SumFwdOp, cpu::SumCpuKernel>("sum_cpu");
  table.add<MeanFwdOp, cpu::MeanCpuKernel>("mean_cpu");
  table.add<AmaxFwdOp, cpu::AmaxCpuKernel>("amax_cpu");
#if TILEOPS_WITH_CUDA
  table.add<SoftmaxFwdOp, cuda::SoftmaxRegistersSm90>("softmax_registers_sm90");
  table.add<SoftmaxFwdOp, cuda::SoftmaxOnlineSm90>("softmax_online_sm90");
  table.add<SoftmaxFwdOp, cuda::SoftmaxStridedSm90>("softmax_strided_sm90");
  table.add<SoftmaxFwdOp, cuda::SoftmaxGeneralSm90>("softmax_general_sm90");
  table.add<LogSoftmaxFwdOp, cuda::LogSoftmaxRegistersSm90>("log_softmax_registers_sm90");
  table.add<LogSoftmaxFwdOp, cuda::LogSoftmaxOnlineSm90>("log_softmax_online_sm90");
  table.add<LogSoftmaxFwdOp, cuda::LogSoftmaxStridedSm90>("log_softmax_strided_sm90");
  table.add<LogSoftmaxFwdOp, cuda::LogSoftmaxGeneralSm90>("log_softmax_general_sm90");
  table.add<SumFwdOp, cuda::SumRowsSm90>("sum_rows_sm90");
  table.add<SumFwdOp, cuda::SumVectorSm90>("sum_vector_sm90");
  table.add<SumFwdOp, cuda::SumGeneralSm90>("sum_general_sm90");
  table.add<MeanFwdOp, cuda::MeanRowsSm90>("mean_rows_sm90");
  table.add<MeanFwdOp, cuda::MeanVectorSm90>("mean_vector_sm90");
  table.add<MeanFwdOp, cuda::MeanGeneralSm90>("mean_general_sm90");
  table.add<AmaxFwdOp, cuda::AmaxRowsSm90>("amax_rows_sm90");
  table.add<AmaxFwdOp, cuda::AmaxVectorSm90>("amax_vector_sm90");
  table.add<AmaxFwdOp, cuda::AmaxGeneralSm90>("amax_general_sm90");
#endif
}

}  // namespace tileops::kernels
