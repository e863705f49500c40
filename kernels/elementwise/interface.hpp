// The elementwise family's kernel interfaces and call spec.
#pragma once

#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A binary elementwise call of `dtype`: whether the inputs broadcast selects the kernel's path;
// the element count only indexes data and keys nothing.
struct BinaryCall : CallSpecOf<BinaryCall> {
  DType dtype = DType::kFloat32;
  bool broadcast = false;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("broadcast", broadcast),
                      field("access", access));
  }
};

class AddFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "add";
  using Call = BinaryCall;
  // out = a + alpha * b, a and b broadcast to out's shape.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                       const Value& alpha, Tensor& out) = 0;
};

class MulFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "mul";
  using Call = BinaryCall;
  // out = a * b, a and b broadcast to out's shape.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) = 0;
};

}  // namespace tileops::kernels
