// CPU reference kernels of the reduction family (manifest/reduction.yaml, docs/manifest.md §4.2).
//
// Tensors are contiguous CPU tensors already checked against the manifest, dtype T in
// {float16, bfloat16, float32}; `out` is preallocated. Values accumulate in float32 and are
// rounded to T once. Dtypes outside that set throw CheckError.
#pragma once

#include <cstdint>
#include <vector>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// out = exp(x - max) / sum(exp(x - max)) along `dim` (already normalised: 0 <= dim < rank).
// x is viewed as [outer, x.shape[dim], inner]; out has x's shape.
void softmax(const Tensor& x, std::int64_t dim, Tensor& out);

// Sums x over the axes whose `reduced[axis]` is true (reduced.size() == x.dim()). The result is
// written in row-major order of the kept axes, so `out` may carry either keepdim layout; it must
// hold prod(kept axes) elements. A sum over zero elements is 0.
void sum(const Tensor& x, const std::vector<bool>& reduced, Tensor& out);

}  // namespace tileops::kernels::cpu
