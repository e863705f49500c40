// The gemm family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/gemm/cpu/gemm_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/gemm.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/gemm/cuda/gemm_kernels.hpp"
#include "kernels/gemm/cuda/grouped_gemm_kernels.hpp"
#endif

namespace tileops::kernels {

void gemm_implementations(ImplementationTable& table) {
  table.add<GemmFwdOp, cpu::GemmCpuKernel>("gemm_cpu");
  table.add<BmmFwdOp, cpu::BmmCpuKernel>("bmm_cpu");
  table.add<GroupedGemmFwdOp, cpu::GroupedGemmCpuKernel>("grouped_gemm_cpu");
#if TILEOPS_WITH_CUDA
  table.add<GemmFwdOp, cuda::GemmCublasLtSm90>("gemm_cublaslt_sm90");
  table.add<BmmFwdOp, cuda::BmmCublasLtSm90>("bmm_cublaslt_sm90");
  table.add<GroupedGemmFwdOp, cuda::GroupedGemmSm90>("grouped_gemm_sm90");
  table.add<GroupedGemmFwdOp, cuda::GroupedGemmGeneralSm90>("grouped_gemm_general_sm90");
  table.add<GroupedGemmFwdOp, cuda::GroupedGemmCutlassSm90>("grouped_gemm_cutlass_sm90");
#endif
}

}  // namespace tileops::kernels
