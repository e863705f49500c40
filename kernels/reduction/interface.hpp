// The reduction family's kernel interfaces and call specs.
#pragma once

#include <string>

#include "tileops/core/tensor.hpp"
#include "tileops/op/hash.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A softmax along one axis of x viewed as [outer, axis, inner].
struct SoftmaxCall : CallSpecBase {
  std::int64_t outer = 0;
  std::int64_t axis = 0;
  std::int64_t inner = 0;
  DType dtype = DType::kFloat32;

  friend bool operator==(const SoftmaxCall& a, const SoftmaxCall& b) {
    return a.device == b.device && a.outer == b.outer && a.axis == b.axis && a.inner == b.inner &&
           a.dtype == b.dtype;
  }
  std::size_t hash() const noexcept {
    return hash_fields(device.value_or(Device::meta()), outer, axis, inner,
                       static_cast<int>(dtype));
  }
  std::string str() const;
};

class SoftmaxFwdInterface : public KernelInterface {
 public:
  using Call = SoftmaxCall;
  // out = softmax(x) along `dim`.
  virtual void forward(const Tensor& x, std::int64_t dim, Tensor& out) = 0;
};

// A sum over the axes set in `reduced_mask` (bit i: axis i) of an input of `rank` axes.
struct SumCall : CallSpecBase {
  std::int64_t numel = 0;
  int rank = 0;
  std::uint64_t reduced_mask = 0;
  DType dtype = DType::kFloat32;

  friend bool operator==(const SumCall& a, const SumCall& b) {
    return a.device == b.device && a.numel == b.numel && a.rank == b.rank &&
           a.reduced_mask == b.reduced_mask && a.dtype == b.dtype;
  }
  std::size_t hash() const noexcept {
    return hash_fields(device.value_or(Device::meta()), numel, rank, reduced_mask,
                       static_cast<int>(dtype));
  }
  std::string str() const;
};

class SumFwdInterface : public KernelInterface {
 public:
  using Call = SumCall;
  // out = x summed over the axes `reduced` marks, in row-major order of the kept axes.
  virtual void forward(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) = 0;
};

}  // namespace tileops::kernels
