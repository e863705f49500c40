// The rope family's implementation table (docs/framework.md): one row per implementation.
#include "kernels/rope/cpu/rope_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/rope.hpp"

namespace tileops::kernels {

void rope_implementations(ImplementationTable& table) {
  table.add<RopeFwdOp, cpu::RopeCpuKernel>("rope_cpu");
}

}  // namespace tileops::kernels
