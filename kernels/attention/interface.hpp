// The attention family's kernel interfaces and call specs.
#pragma once

#include <string>

#include "tileops/core/tensor.hpp"
#include "tileops/op/hash.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

struct AlibiCall : CallSpecBase {
  std::int64_t num_heads = 0;
  std::int64_t seq_len = 0;
  DType dtype = DType::kFloat32;

  friend bool operator==(const AlibiCall& a, const AlibiCall& b) {
    return a.device == b.device && a.num_heads == b.num_heads && a.seq_len == b.seq_len &&
           a.dtype == b.dtype;
  }
  std::size_t hash() const noexcept {
    return hash_fields(device.value_or(Device::meta()), num_heads, seq_len,
                       static_cast<int>(dtype));
  }
  std::string str() const;
};

class AlibiFwdInterface : public KernelInterface {
 public:
  using Call = AlibiCall;
  // out[h, i, j] = slope(h) * (j - i).
  virtual void forward(Tensor& out) = 0;
};

}  // namespace tileops::kernels
