// CPU reference kernels of the reduction family (manifest/reduction.yaml, docs/manifest.md §4.2).
//
// Tensors are contiguous CPU tensors already checked against the manifest, of one dtype T in
// {float16, bfloat16, float32} (amax: also int32, int64); `out` is preallocated. Float values
// accumulate in float32, sums as a cascade (Note [Cascade summation] in
// kernels/common/cpu/cascade.hpp), and are rounded to T once. Dtypes outside that set throw
// CheckError.
#pragma once

#include <cstdint>
#include <vector>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// out = exp(x - max) / sum(exp(x - max)) along `dim` (already normalised: 0 <= dim < rank).
// x is viewed as [outer, x.shape[dim], inner]; out has x's shape.
void softmax(const Tensor& x, std::int64_t dim, Tensor& out);
// out = x - max - log(sum(exp(x - max))) along `dim`, as softmax.
void log_softmax(const Tensor& x, std::int64_t dim, Tensor& out);

// Reductions of x over the axes whose `reduced[axis]` is true (reduced.size() == x.dim(); a
// rank-0 x is one element, reduced as a slice of one). The result is written in row-major order
// of the kept axes, so `out` may carry either keepdim layout; it must hold prod(kept axes)
// elements. The result does not depend on the number of threads.
//
// The sum; over zero elements, 0.
void sum(const Tensor& x, const std::vector<bool>& reduced, Tensor& out);
// The sum divided by the number of reduced elements; over zero elements, NaN (0 / 0).
void mean(const Tensor& x, const std::vector<bool>& reduced, Tensor& out);
// The maximum; NaN when the slice holds a NaN. No reduced axis may have length 0 (the manifest
// rejects it: max has no identity).
void amax(const Tensor& x, const std::vector<bool>& reduced, Tensor& out);

}  // namespace tileops::kernels::cpu
