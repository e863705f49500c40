// The norm family's implementation table (STYLE.md habit 2): one row per implementation. Precedence
// is declared by each implementation (general, preferred_over), never by the order here.
#include "kernels/norm/cpu/norm_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops::kernels {

void norm_implementations(ImplementationTable& table) {
  table.add<RMSNormFwdOp, cpu::RMSNormRowwiseKernel>("rms_norm_rowwise_cpu");
  table.add<RMSNormFwdOp, cpu::RMSNormBlockedKernel>("rms_norm_blocked_cpu");
  table.add<LayerNormFwdOp, cpu::LayerNormCpuKernel>("layer_norm_cpu");
  table.add<FusedAddRMSNormFwdOp, cpu::FusedAddRMSNormCpuKernel>("fused_add_rms_norm_cpu");
}

}  // namespace tileops::kernels
