// The activation family's kernel interfaces and call specs (manifest/activation.yaml).
#pragma once

#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// An activation call: the dtype, GELU's form (it selects the formula a kernel computes), the
// alignment of a gated call's rows and the access class. Sizes (the element count, the rows and N
// of a gated call) only index data and key nothing (Note [Call spec fields]); what the vector
// paths refuse on stays, as a bucket: `row_alignment`, the largest power of two up to 16 dividing
// N's bytes (where each half of a row starts), 16 for the elementwise ops.
struct ActivationCall : CallSpecOf<ActivationCall> {
  DType dtype = DType::kFloat32;
  bool tanh = false;  // GELU's tanh approximation; false for SiLU
  int row_alignment = 16;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("tanh", tanh),
                      field("row_alignment", row_alignment), field("access", access));
  }
};

// out = act(x) elementwise, x and out contiguous of one shape.
class SiluFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "silu";
  using Call = ActivationCall;
  virtual void forward(const KernelContext& ctx, const Tensor& x, Tensor& out) = 0;
};

class GeluFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "gelu";
  using Call = ActivationCall;
  virtual void forward(const KernelContext& ctx, const Tensor& x, Tensor& out) = 0;
};

// out[..., i] = act(x[..., i]) * x[..., N + i] for x of last axis 2 N and out of last axis N, both
// contiguous.
class SiluAndMulFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "silu_and_mul";
  using Call = ActivationCall;
  virtual void forward(const KernelContext& ctx, const Tensor& x, Tensor& out) = 0;
};

class GeluAndMulFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "gelu_and_mul";
  using Call = ActivationCall;
  virtual void forward(const KernelContext& ctx, const Tensor& x, Tensor& out) = 0;
};

}  // namespace tileops::kernels
