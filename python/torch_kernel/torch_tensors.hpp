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

// A view of `t` that holds its storage (the view may outlive the call, as an output can).
Tensor view_of(const at::Tensor& t);
// An at::Tensor over `t`'s memory that holds `t`.
at::Tensor torch_of(const Tensor& t);
// torch's current stream on CUDA device `index`, as its native handle.
void* current_cuda_stream(int index);

}  // namespace tileops::torch_kernel
