// The norm family's kernel interfaces and their call spec: the contract between the norm ops and
// their kernels. Every tensor a kernel receives is contiguous and on the call's device; `out` is
// allocated (or is the caller's out buffer) with the output's shape and dtype.
#pragma once

#include <string>

#include "tileops/core/tensor.hpp"
#include "tileops/op/hash.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// One normalisation call: rows of `n` elements of `dtype`.
struct NormCall : CallSpecBase {
  std::int64_t n = 0;
  double eps = 0;
  DType dtype = DType::kFloat32;
  bool has_weight = false;
  bool has_bias = false;

  friend bool operator==(const NormCall& a, const NormCall& b) {
    return a.device == b.device && a.n == b.n && a.eps == b.eps && a.dtype == b.dtype &&
           a.has_weight == b.has_weight && a.has_bias == b.has_bias;
  }
  std::size_t hash() const noexcept {
    return hash_fields(device.value_or(Device::meta()), n, eps, static_cast<int>(dtype), has_weight,
                       has_bias);
  }
  std::string str() const;
};

class RMSNormFwdInterface : public KernelInterface {
 public:
  using Call = NormCall;
  // out = x * rsqrt(mean(x^2) + eps) [* weight], row by row.
  virtual void forward(const Tensor& x, const Tensor* weight, Tensor& out) = 0;
};

class LayerNormFwdInterface : public KernelInterface {
 public:
  using Call = NormCall;
  // out = (x - mean) / sqrt(var + eps) [* weight] [+ bias], biased variance.
  virtual void forward(const Tensor& x, const Tensor* weight, const Tensor* bias, Tensor& out) = 0;
};

class FusedAddRMSNormFwdInterface : public KernelInterface {
 public:
  using Call = NormCall;
  // residual <- x + residual (in place), out = rms_norm(residual) * weight.
  virtual void forward(const Tensor& x, Tensor& residual, const Tensor& weight, Tensor& out) = 0;
};

}  // namespace tileops::kernels
