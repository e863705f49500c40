// The reduction family's kernel interfaces and call specs.
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A softmax or log_softmax along one axis of x viewed as [outer, axis, inner]. The axis length
// keys the call as a bucket, ceil(log2(axis)), which is what a kernel's layout depends on (a row
// in registers, in shared memory, or streamed); the number of rows does not key it.
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

// What softmax and log_softmax share: the call spec and the contract of forward.
class AlongAxisInterface : public KernelInterface {
 public:
  using Call = SoftmaxCall;
  // out = the op along `dim` (0 <= dim < x.dim()); out has x's shape.
  virtual void forward(const KernelContext& ctx, const Tensor& x, std::int64_t dim,
                       Tensor& out) = 0;
};

class SoftmaxFwdInterface : public AlongAxisInterface {
 public:
  static constexpr std::string_view kName = "softmax";
};

class LogSoftmaxFwdInterface : public AlongAxisInterface {
 public:
  static constexpr std::string_view kName = "log_softmax";
};

// A reduction (sum, mean, amax) over the axes set in `reduced_mask` (bit i: axis i) of an input
// of `rank` axes; which axes are reduced selects the kernel, the sizes do not. A rank-0 input
// has rank 0 and no bit set: its one element is the slice each op reduces.
struct ReductionCall : CallSpecOf<ReductionCall> {
  int rank = 0;
  std::uint64_t reduced_mask = 0;
  DType dtype = DType::kFloat32;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("rank", rank), field("reduced_mask", reduced_mask),
                      field("dtype", dtype), field("access", access));
  }
};

// What sum, mean and amax share: the call spec and the contract of forward.
class AxesReductionInterface : public KernelInterface {
 public:
  using Call = ReductionCall;
  // out = x reduced over the axes `reduced` marks (reduced.size() == x.dim()), in row-major order
  // of the kept axes, so `out` may carry either keepdim layout.
  virtual void forward(const KernelContext& ctx, const Tensor& x, const std::vector<bool>& reduced,
                       Tensor& out) = 0;
};

class SumFwdInterface : public AxesReductionInterface {
 public:
  static constexpr std::string_view kName = "sum";
};

class MeanFwdInterface : public AxesReductionInterface {
 public:
  static constexpr std::string_view kName = "mean";
};

class AmaxFwdInterface : public AxesReductionInterface {
 public:
  static constexpr std::string_view kName = "amax";
};

}  // namespace tileops::kernels
