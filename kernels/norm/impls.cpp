// The norm family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "kernels/norm/cpu/norm_kernels.hpp"
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/norm.hpp"
#if TILEOPS_WITH_CUDA
#include "kernels/norm/cuda/norm_kernels.hpp"
#endif

namespace tileops::kernels {

void norm_implementations(ImplementationTable& table) {
  table.add<RMSNormFwdOp, cpu::RMSNormRowwiseKernel>("rms_norm_rowwise_cpu");
  table.add<RMSNormFwdOp, cpu::RMSNormBlockedKernel>("rms_norm_blocked_cpu");
  table.add<LayerNormFwdOp, cpu::LayerNormCpuKernel>("layer_norm_cpu");
  table.add<FusedAddRMSNormFwdOp, cpu::FusedAddRMSNormCpuKernel>("fused_add_rms_norm_cpu");
#if TILEOPS_WITH_CUDA
  table.add<RMSNormFwdOp, cuda::RMSNormWarpSm90>("rms_norm_warp_sm90");
  table.add<RMSNormFwdOp, cuda::RMSNormFixedSm90>("rms_norm_fixed_sm90");
  table.add<RMSNormFwdOp, cuda::RMSNormBlockSm90>("rms_norm_block_sm90");
  table.add<RMSNormFwdOp, cuda::RMSNormStreamingSm90>("rms_norm_streaming_sm90");
  table.add<RMSNormFwdOp, cuda::RMSNormGeneralSm90>("rms_norm_general_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormWarpSm90>("layer_norm_warp_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormFixedSm90>("layer_norm_fixed_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormSharedSm90>("layer_norm_shared_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormBlockSm90>("layer_norm_block_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormStreamingSm90>("layer_norm_streaming_sm90");
  table.add<LayerNormFwdOp, cuda::LayerNormGeneralSm90>("layer_norm_general_sm90");
  table.add<FusedAddRMSNormFwdOp, cuda::FusedAddRMSNormWarpSm90>("fused_add_rms_norm_warp_sm90");
  table.add<FusedAddRMSNormFwdOp, cuda::FusedAddRMSNormSharedSm90>(
      "fused_add_rms_norm_shared_sm90");
  table.add<FusedAddRMSNormFwdOp, cuda::FusedAddRMSNormBlockSm90>("fused_add_rms_norm_block_sm90");
  table.add<FusedAddRMSNormFwdOp, cuda::FusedAddRMSNormStreamingSm90>(
      "fused_add_rms_norm_streaming_sm90");
  table.add<FusedAddRMSNormFwdOp, cuda::FusedAddRMSNormGeneralSm90>(
      "fused_add_rms_norm_general_sm90");
#endif
}

}  // namespace tileops::kernels
