// The activation family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/activation/cpu/activation_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/activation.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/activation/cuda/activation_kernels.hpp"
#endif

namespace tileops::kernels {

void activation_implementations(ImplementationTable& table) {
  table.add<SiluFwdOp, cpu::SiluCpuKernel>("silu_cpu");
  table.add<GeluFwdOp, cpu::GeluCpuKernel>("gelu_cpu");
  table.add<SiluAndMulFwdOp, cpu::SiluAndMulCpuKernel>("silu_and_mul_cpu");
  table.add<GeluAndMulFwdOp, cpu::GeluAndMulCpuKernel>("gelu_and_mul_cpu");
#if TILEOPS_WITH_CUDA
  table.add<SiluFwdOp, cuda::SiluVectorSm90>("silu_vector_sm90");
  table.add<SiluFwdOp, cuda::SiluGeneralSm90>("silu_general_sm90");
  table.add<GeluFwdOp, cuda::GeluVectorSm90>("gelu_vector_sm90");
  table.add<GeluFwdOp, cuda::GeluGeneralSm90>("gelu_general_sm90");
  table.add<SiluAndMulFwdOp, cuda::SiluAndMulVectorSm90>("silu_and_mul_vector_sm90");
  table.add<SiluAndMulFwdOp, cuda::SiluAndMulGeneralSm90>("silu_and_mul_general_sm90");
  table.add<GeluAndMulFwdOp, cuda::GeluAndMulVectorSm90>("gelu_and_mul_vector_sm90");
  table.add<GeluAndMulFwdOp, cuda::GeluAndMulGeneralSm90>("gelu_and_mul_general_sm90");
#endif
}

}  // namespace tileops::kernels
