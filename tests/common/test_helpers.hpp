// Helpers shared by the test folders: the text of the error a call raises, tensors that claim to
// live on a CUDA device, and PyTorch's broadcast of two shapes written out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tileops/core/tensor.hpp"

namespace tileops::test_common {

// The message of the `E` that `f` throws; "<no error>" when none, "<other: ...>" for another type.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other: ") + e.what() + ">";
  }
  return "<no error>";
}

// A contiguous view that claims to live on cuda:`index`. The checks and the framework never touch
// its data, so host memory stands in for device memory; the view keeps it alive.
inline Tensor host_backed_cuda_tensor(Shape shape, DType dtype, int index) {
  auto backing = std::make_shared<std::vector<std::byte>>(
      static_cast<std::size_t>(std::max<std::int64_t>(shape.numel(), 1)) * dtype_size(dtype));
  Shape strides;
  std::int64_t stride = 1;
  std::vector<std::int64_t> s(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = stride;
    stride *= shape[i];
  }
  for (std::int64_t v : s) strides.push_back(v);
  return Tensor::from_blob(backing->data(), shape, strides, dtype, Device::cuda(index), backing);
}

// The shape of a and b broadcast together by PyTorch's rules (right-aligned; an axis of length 1
// takes the other's length), written out here rather than taken from the library it checks.
inline Shape broadcast_shape(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out = Shape::filled(rank, 1);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t da = k + a.size() < rank ? 1 : a[k + a.size() - rank];
    const std::int64_t db = k + b.size() < rank ? 1 : b[k + b.size() - rank];
    out[k] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace tileops::test_common
