// The instantiated norm kernels, one function per op (norm_rms.cu, norm_layer.cu,
// norm_fused_add.cu, compiled in parallel): the kernel of a path, dtype and lanes per row, as the
// pointer cudaLaunchKernel takes; `few_rows_cluster` (1, 2, 4 or 8) asks instead for the block
// and shared paths' kernel for calls of a few rows in clusters of that many blocks (Note [Few rows]
// in norm.cuh; the fixed path has only those: its kernel of many rows comes from
// <op>_fixed_kernel). CheckError for a dtype outside float16, bfloat16, float32.
#pragma once

#include "kernels/norm/cuda/norm_launch.hpp"

namespace tileops::kernels::cuda {

// Lanes per row of the warp path: 8 for rows of up to 8 * kNormVectorsPerLane vectors (Qwen's
// 128-element head norms: four rows per warp), else 32.
inline constexpr int kNarrowLanes = 8;

const void* rms_norm_kernel(NormPath path, DType dtype, int lanes, int few_rows_cluster = 0);
const void* layer_norm_kernel(NormPath path, DType dtype, int lanes, int few_rows_cluster = 0);
const void* fused_add_rms_norm_kernel(NormPath path, DType dtype, int lanes,
                                      int few_rows_cluster = 0);
// The fixed path's kernel for rows of `n` elements of `dtype` (norm_fixed_row), or none.
NormFixedKernel rms_norm_fixed_kernel(DType dtype, std::int64_t n);
NormFixedKernel layer_norm_fixed_kernel(DType dtype, std::int64_t n);

}  // namespace tileops::kernels::cuda
