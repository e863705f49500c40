// The attention family's kernel interfaces and call specs.
#pragma once

#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// An ALiBi bias of `dtype`; the kernel reads the head count and sequence length from `out`.
struct AlibiCall : CallSpecOf<AlibiCall> {
  DType dtype = DType::kFloat32;
  AccessClass access;

  auto fields() const { return std::tuple(field("dtype", dtype), field("access", access)); }
};

class AlibiFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "alibi";
  using Call = AlibiCall;
  // out[h, i, j] = slope(h) * (j - i), out of shape [heads, seq_len, seq_len].
  virtual void forward(const KernelContext& ctx, Tensor& out) = 0;
};

}  // namespace tileops::kernels
