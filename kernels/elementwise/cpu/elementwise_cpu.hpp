// CPU reference kernels of the elementwise family (manifest/elementwise.yaml, docs/manifest.md
// §4.3).
//
// a and b are contiguous CPU tensors of one dtype T in {float16, bfloat16, float32, int32,
// int64}; `out` is contiguous, of dtype T and of the broadcast shape of a and b (PyTorch rules:
// shapes align at the right, missing leading axes and axes of length 1 broadcast). The op layer
// has checked all of that. Floats compute in float32 and round to T once; integers wrap (two's
// complement), computed in unsigned arithmetic so that overflow is defined.
#pragma once

#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"

namespace tileops::kernels::cpu {

// out = a + alpha * b. `alpha` holds an int or a float (AddFwdOp's `int | float` param): for
// float T it is used as a float32 (an int alpha converts), for integer T it must be an int and
// is wrapped to T's width, as torch's `alpha.to<T>()` does.
void add(const Tensor& a, const Tensor& b, const Value& alpha, Tensor& out);

// out = a * b.
void mul(const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace tileops::kernels::cpu
