// The reduction family's kernel interfaces and call specs.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A softmax along one axis of x viewed as [outer, axis, inner]. The axis length keys the call as
// a bucket, ceil(log2(axis)), which is what a kernel's layout depends on (a row in registers, in
// shared memory, or streamed); the number of rows does not key it.
struct SoftmaxCall : CallSpecOf<SoftmaxCall> {
  DType dtype = DType::kFloat32;
  int axis_bucket = 0;
  bool innermost = true;  // the axis is the last non-trivial one (inner == 1)
  AccessClass access;

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("axis_bucket", axis_bucket),
                      field("innermost", innermost), field("access", access));
  }
};

class SoftmaxFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "softmax";
  using Call = SoftmaxCall;
  // out = softmax(x) along `dim` (0 <= dim < x.dim()).
  virtual void forward(const KernelContext& ctx, const Tensor& x, std::int64_t dim,
                       Tensor& out) = 0;
};

// A sum over the axes set in `reduced_mask` (bit i: axis i) of an input of `rank` axes; which
// axes are reduced selects the kernel, the sizes do not.
struct SumCall : CallSpecOf<SumCall> {
  int rank = 0;
  std::uint64_t reduced_mask = 0;
  DType dtype = DType::kFloat32;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("rank", rank), field("reduced_mask", reduced_mask),
                      field("dtype", dtype), field("access", access));
  }
};

class SumFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "sum";
  using Call = SumCall;
  // out = x summed over the axes `reduced` marks, in row-major order of the kept axes.
  virtual void forward(const KernelContext& ctx, const Tensor& x, const std::vector<bool>& reduced,
                       Tensor& out) = 0;
};

}  // namespace tileops::kernels
