// The rope family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/rope/cpu/rope_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/rope.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/rope/cuda/rope_kernels.hpp"
#endif

namespace tileops::kernels {

void rope_implementations(ImplementationTable& table) {
  table.add<RopeFwdOp, cpu::RopeCpuKernel>("rope_cpu");
#if TILEOPS_WITH_CUDA
  table.add<RopeFwdOp, cuda::RopeNeoxVectorSm90>("rope_neox_vector_sm90");
  table.add<RopeFwdOp, cuda::RopeInterleavedVectorSm90>("rope_interleaved_vector_sm90");
  table.add<RopeFwdOp, cuda::RopeGeneralSm90>("rope_general_sm90");
#endif
}

}  // namespace tileops::kernels
