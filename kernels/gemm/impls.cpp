// The gemm family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/gemm/cpu/gemm_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops::kernels {

void gemm_implementations(ImplementationTable& table) {
  table.add<GemmFwdOp, cpu::GemmCpuKernel>("gemm_cpu");
  table.add<BmmFwdOp, cpu::BmmCpuKernel>("bmm_cpu");
  table.add<GroupedGemmFwdOp, cpu::GroupedGemmCpuKernel>("grouped_gemm_cpu");
}

}  // namespace tileops::kernels
