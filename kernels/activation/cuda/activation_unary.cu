// SiluFwdOp's and GeluFwdOp's CUDA kernels (activation.cuh), every path, form and dtype.
#include "kernels/activation/cuda/activation_instances.cuh"

namespace tileops::kernels::cuda {
namespace {

template <ActivationKind kKind, class T>
struct UnaryVector {
  static const void* get() { return reinterpret_cast<const void*>(&unary_vector_kernel<kKind, T>); }
};
template <ActivationKind kKind, class T>
struct UnaryGeneral {
  static const void* get() {
    return reinterpret_cast<const void*>(&unary_general_kernel<kKind, T>);
  }
};

}  // namespace

const void* unary_activation_kernel(ActivationKind kind, bool vector, DType dtype) {
  return vector ? activation_kernel<UnaryVector>(kind, dtype)
                : activation_kernel<UnaryGeneral>(kind, dtype);
}

}  // namespace tileops::kernels::cuda
