// The norm family's kernel interfaces and their call spec: the contract between the norm ops and
// their kernels. Every tensor a kernel receives is contiguous and on the call's device; `out` is
// allocated (or is the caller's out buffer) with the output's shape and dtype.
#pragma once

#include <cstdint>
#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// One normalisation call: rows of `n` elements of `dtype`. The row length keys it (kernels pick
// their layout by it, and models have a handful of them); the number of rows does not.
struct NormCall : CallSpecOf<NormCall> {
  std::int64_t n = 0;
  double eps = 0;  // resolved: None is kDefaultNormEps
  DType dtype = DType::kFloat32;
  bool has_weight = false;
  bool has_bias = false;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("n", n), field("eps", eps), field("dtype", dtype),
                      field("has_weight", has_weight), field("has_bias", has_bias),
                      field("access", access));
  }
};

class RMSNormFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "rms_norm";
  using Call = NormCall;
  // out = x * rsqrt(mean(x^2) + eps) [* weight], row by row.
  virtual void forward(const KernelContext& ctx, const Tensor& x, const Tensor* weight,
                       Tensor& out) = 0;
};

class LayerNormFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "layer_norm";
  using Call = NormCall;
  // out = (x - mean) / sqrt(var + eps) [* weight] [+ bias], biased variance.
  virtual void forward(const KernelContext& ctx, const Tensor& x, const Tensor* weight,
                       const Tensor* bias, Tensor& out) = 0;
};

class FusedAddRMSNormFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "fused_add_rms_norm";
  using Call = NormCall;
  // residual <- x + residual (in place), out = rms_norm(residual) * weight.
  virtual void forward(const KernelContext& ctx, const Tensor& x, Tensor& residual,
                       const Tensor& weight, Tensor& out) = 0;
};

}  // namespace tileops::kernels
