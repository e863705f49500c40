// The elementwise family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/elementwise/cpu/elementwise_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/elementwise.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/elementwise/cuda/elementwise_kernels.hpp"
#endif

namespace tileops::kernels {

void elementwise_implementations(ImplementationTable& table) {
  table.add<AddFwdOp, cpu::AddCpuKernel>("add_cpu");
  table.add<MulFwdOp, cpu::MulCpuKernel>("mul_cpu");
#if TILEOPS_WITH_CUDA
  table.add<AddFwdOp, cuda::AddVectorSm90>("add_vector_sm90");
  table.add<AddFwdOp, cuda::AddBroadcastSm90>("add_broadcast_sm90");
  table.add<AddFwdOp, cuda::AddGeneralSm90>("add_general_sm90");
  table.add<MulFwdOp, cuda::MulVectorSm90>("mul_vector_sm90");
  table.add<MulFwdOp, cuda::MulBroadcastSm90>("mul_broadcast_sm90");
  table.add<MulFwdOp, cuda::MulGeneralSm90>("mul_general_sm90");
#endif
}

}  // namespace tileops::kernels
