// The registration function of each op family (called by register_builtin_ops).
#pragma once

namespace tileops::ops {

void register_norm_ops();
void register_reduction_ops();
void register_elementwise_ops();
void register_attention_ops();

}  // namespace tileops::ops
