// The attention family's implementation table (docs/framework.md): one row per implementation.
#include "kernels/attention/cpu/attention_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops::kernels {

void attention_implementations(ImplementationTable& table) {
  table.add<AlibiFwdOp, cpu::AlibiCpuKernel>("alibi_cpu");
}

}  // namespace tileops::kernels
