// SiluAndMulFwdOp's and GeluAndMulFwdOp's CUDA kernels (activation.cuh), every path, form and
// dtype.
#include "kernels/activation/cuda/activation_instances.cuh"

namespace tileops::kernels::cuda {
namespace {

template <ActivationKind kKind, class T>
struct GatedVector {
  static const void* get() { return reinterpret_cast<const void*>(&gated_kernel<kKind, T, true>); }
};
template <ActivationKind kKind, class T>
struct GatedGeneral {
  static const void* get() { return reinterpret_cast<const void*>(&gated_kernel<kKind, T, false>); }
};

}  // namespace

const void* gated_activation_kernel(ActivationKind kind, bool vector, DType dtype) {
  return vector ? activation_kernel<GatedVector>(kind, dtype)
                : activation_kernel<GatedGeneral>(kind, dtype);
}

}  // namespace tileops::kernels::cuda
