// CPU reference kernels of the activation family (manifest/activation.yaml).
//
// x and out are contiguous CPU tensors of one dtype T in {float16, bfloat16, float32}; the op
// layer has checked the shapes: out has x's shape, or for the gated ops x's shape with the last
// axis halved. Each element computes in float32 and rounds to T once, as the manifest says:
//   silu(g)         = g / (1 + exp(-g))
//   gelu(g)         = 0.5 g (1 + erf(g / sqrt(2)))
//   gelu_tanh(g)    = 0.5 g (1 + tanh(sqrt(2 / pi) (g + 0.044715 g^3)))
//   *_and_mul(x)    = act(x[..., :N]) * x[..., N:]
// These are the formulas torch's CPU kernels evaluate, so for large negative g the GELU forms
// cancel (1 + erf(...) -> 0) in float32 as torch's do.
#pragma once

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

void silu(const Tensor& x, Tensor& out);
void gelu(const Tensor& x, bool tanh, Tensor& out);
void silu_and_mul(const Tensor& x, Tensor& out);
void gelu_and_mul(const Tensor& x, bool tanh, Tensor& out);

}  // namespace tileops::kernels::cpu
