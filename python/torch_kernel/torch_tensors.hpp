// Library tensors and torch tensors, viewed as each other without a copy, and torch's current CUDA
// stream: what the C++ operator kernel (call_kernel.cpp) and the Python bridge (python_bridge.cpp)
// share.
#pragma once

#include <ATen/core/Tensor.h>

#include "tileops/core/tensor.hpp"

namespace tileops::torch_kernel {

DType dtype_of(at::ScalarType type);  // c10::TypeError for a dtype the library lacks
at::ScalarType scalar_type_of(DType dtype);
Device device_of(const at::Device& device);  // c10::NotImplementedError past CPU and CUDA

// Why `t`'s memory does not hold its values, so that no view of it may be taken: its negative or
// conjugate bit (lazy_bits.hpp). nullptr for a tensor whose memory is its values.
const char* lazy_bit_of(const at::Tensor& t);
// A view of `t` that holds its storage (the view may outlive the call, as an output can);
// c10::ValueError where lazy_bit_of(t) says why it cannot be. (The operator kernel never sees a
// lazy bit: torch's dispatcher resolves it first. The Python bridge does, and declines it.)
Tensor view_of(const at::Tensor& t);
// An at::Tensor over `t`'s memory that holds `t`.
at::Tensor torch_of(const Tensor& t);
// torch's current stream on CUDA device `index`, as its native handle.
void* current_cuda_stream(int index);

}  // namespace tileops::torch_kernel
