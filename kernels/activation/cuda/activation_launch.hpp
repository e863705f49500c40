// The activation kernels as the adapters see them (no CUDA header): a plan made once per entry,
// and a launch per call.
#pragma once

#include "tileops/core/dtype.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cuda {

// The function a kernel applies (the formulas of activation_cpu.hpp).
enum class ActivationKind { kSilu, kGeluErf, kGeluTanh };

// What an entry builds once, on its device (Note [Activation kernels] in activation.cuh).
struct ActivationLaunch {
  const void* kernel = nullptr;  // the instantiation for (kind, gated, vector, dtype)
  bool gated = false;            // out = act(x[..., :N]) * x[..., N:]
  bool vector = false;           // 16-byte vectors, else one element at a time
  int sm_count = 1;              // multiprocessors of the entry's device
};
// Plans a kernel for `dtype` on the current device, which has `sm_count` multiprocessors.
ActivationLaunch plan_activation(ActivationKind kind, bool gated, bool vector, DType dtype,
                                 int sm_count);

// Launches on `stream` (a cudaStream_t) of the current device; x and out contiguous, out of x's
// shape (or, gated, x's with the last axis halved). An empty out launches nothing.
void launch_activation(const ActivationLaunch& launch, const Tensor& x, Tensor& out, void* stream);

// The instantiations (activation_unary.cu, activation_gated.cu).
const void* unary_activation_kernel(ActivationKind kind, bool vector, DType dtype);
const void* gated_activation_kernel(ActivationKind kind, bool vector, DType dtype);

}  // namespace tileops::kernels::cuda
