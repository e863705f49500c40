// CPU reference kernels of the norm family (manifest/norm.yaml, docs/manifest.md §4.1).
//
// Contract shared by every function here: tensors are contiguous CPU tensors that the op layer
// has already checked against the manifest (shapes, one dtype T in {float16, bfloat16, float32},
// `out` preallocated). The trailing `n` elements of each row are normalized; rows = numel / n.
// Statistics and the normalization run in float32 and the result is rounded to T once, at the
// end. `eps` is the resolved value: the op layer maps eps = None to kDefaultNormEps.
// Dtypes outside the manifest's set throw CheckError.
#pragma once

#include <cstdint>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// out = x * rsqrt(mean(x^2) + eps) [* weight]. weight (nullable) has n elements.
// rms_norm_rowwise makes one simple pass per row and serves every shape.
void rms_norm_rowwise(const Tensor& x, const Tensor* weight, double eps, std::int64_t n,
                      Tensor& out);
// Same contract and results (to float32-accumulation tolerance), organised for long rows
// (n >= 1024): rows go in blocks, each row is widened once into a float scratch row and reduced
// with independent lanes the compiler can vectorise (Note [Blocked RMSNorm] in the .cpp).
void rms_norm_blocked(const Tensor& x, const Tensor* weight, double eps, std::int64_t n,
                      Tensor& out);

// out = (x - mean) / sqrt(var + eps) [* weight] [+ bias], biased variance (divide by n).
void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps,
                std::int64_t n, Tensor& out);

// residual <- T(x + residual) in place, then out = rms_norm(residual, weight, eps) read from the
// stored, T-rounded residual (torch's `residual.add_(x)` followed by rms_norm). x is only read.
void fused_add_rms_norm(const Tensor& x, Tensor& residual, const Tensor& weight, double eps,
                        std::int64_t n, Tensor& out);

}  // namespace tileops::kernels::cpu
