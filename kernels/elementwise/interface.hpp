// The elementwise family's kernel interfaces and call spec.
#pragma once

#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A binary elementwise call of `dtype`. What selects a path: whether the inputs broadcast, whether
// one is a non-contiguous view, and what the merged layout allows (Note [Binary layout] in
// binary_layout.hpp): its number of axes and the alignment of its rows. The element count and the
// shapes only index data and key nothing.
struct BinaryCall : CallSpecOf<BinaryCall> {
  DType dtype = DType::kFloat32;
  bool broadcast = false;
  bool strided = false;    // an input is a non-contiguous view
  int axes = 1;            // of the merged layout; above kMaxBinaryAxes: too many
  int row_alignment = 16;  // binary_row_alignment of the layout
  AccessClass access;      // every pointer, views' included

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("broadcast", broadcast),
                      field("strided", strided), field("axes", axes),
                      field("row_alignment", row_alignment), field("access", access));
  }
};

class AddFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "add";
  using Call = BinaryCall;
  // out = a + alpha * b, a and b broadcast to out's shape; a and b may be views of any strides,
  // out is contiguous.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                       const Value& alpha, Tensor& out) = 0;
};

class MulFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "mul";
  using Call = BinaryCall;
  // out = a * b, as add.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) = 0;
};

}  // namespace tileops::kernels
