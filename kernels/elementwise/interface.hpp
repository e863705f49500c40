// The elementwise family's kernel interfaces and call spec.
#pragma once

#include <string>

#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/op/hash.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// A binary elementwise call: `numel` output elements of `dtype`, broadcast or not.
struct BinaryCall : CallSpecBase {
  std::int64_t numel = 0;
  DType dtype = DType::kFloat32;
  bool broadcast = false;

  friend bool operator==(const BinaryCall& a, const BinaryCall& b) {
    return a.device == b.device && a.numel == b.numel && a.dtype == b.dtype &&
           a.broadcast == b.broadcast;
  }
  std::size_t hash() const noexcept {
    return hash_fields(device.value_or(Device::meta()), numel, static_cast<int>(dtype), broadcast);
  }
  std::string str() const;
};

class AddFwdInterface : public KernelInterface {
 public:
  using Call = BinaryCall;
  // out = a + alpha * b, a and b broadcast to out's shape.
  virtual void forward(const Tensor& a, const Tensor& b, const Value& alpha, Tensor& out) = 0;
};

class MulFwdInterface : public KernelInterface {
 public:
  using Call = BinaryCall;
  // out = a * b, a and b broadcast to out's shape.
  virtual void forward(const Tensor& a, const Tensor& b, Tensor& out) = 0;
};

}  // namespace tileops::kernels
