// The attention family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/attention/cpu/attention_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/attention.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/attention/cuda/attention_kernels.hpp"
#endif

namespace tileops::kernels {

void attention_implementations(ImplementationTable& table) {
  table.add<AlibiFwdOp, cpu::AlibiCpuKernel>("alibi_cpu");
#if TILEOPS_WITH_CUDA
  table.add<AlibiFwdOp, cuda::AlibiVectorSm90>("alibi_vector_sm90");
  table.add<AlibiFwdOp, cuda::AlibiGeneralSm90>("alibi_general_sm90");
#endif
}

}  // namespace tileops::kernels
