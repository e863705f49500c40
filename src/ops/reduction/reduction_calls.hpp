// What the reduction family's op classes share: their call specs, and how a reduction's `dim`
// reaches the kernels (manifest/reduction.yaml).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/reduction/interface.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/op/op.hpp"

namespace tileops::ops {

// SoftmaxFwdOp, LogSoftmaxFwdOp: the call spec of a call along `dim` (checked by the signature).
kernels::SoftmaxCall softmax_call(std::int64_t dim, const CallArgs& args);
// Runs `kernel` on x along `dim` into out. The kernels take an axis of the tensor
// (0 <= axis < rank); a scalar, which PyTorch lets dim 0 and -1 name, goes as a row of one.
void run_along_axis(kernels::AlongAxisInterface& kernel, const CallArgs& args, const Tensor& x,
                    std::int64_t dim, Tensor& out);

// SumFwdOp, MeanFwdOp, AmaxFwdOp: which axes of a rank-`rank` input `dim` reduces, as the
// manifest's reduced(S, dim, keepdim, 'full') reads it: None or [] reduces every axis. The
// signature checked the axes. A scalar has no axis to mark: as in PyTorch, dim 0 or -1 names the
// scalar itself, and the kernels reduce its one element as a slice of one.
std::vector<bool> reduced_axes(const std::optional<Shape>& dim, std::size_t rank);
kernels::ReductionCall reduction_call(const std::vector<bool>& reduced, const CallArgs& args);

}  // namespace tileops::ops
