// Dispatch from (kind, dtype) to an instantiation; included by activation_unary.cu and
// activation_gated.cu.
#pragma once

#include "kernels/activation/cuda/activation.cuh"

namespace tileops::kernels::cuda {

// `Pick<kind, T>::get()` returns the kernel of one (kind, T); null for a dtype outside float16,
// bfloat16, float32.
template <template <ActivationKind, class> class Pick>
const void* activation_kernel(ActivationKind kind, DType dtype) {
  auto of_kind = [&]<ActivationKind kKind>() -> const void* {
    switch (dtype) {
      case DType::kFloat16:
        return Pick<kKind, __half>::get();
      case DType::kBFloat16:
        return Pick<kKind, __nv_bfloat16>::get();
      case DType::kFloat32:
        return Pick<kKind, float>::get();
      default:
        return nullptr;
    }
  };
  switch (kind) {
    case ActivationKind::kSilu:
      return of_kind.template operator()<ActivationKind::kSilu>();
    case ActivationKind::kGeluErf:
      return of_kind.template operator()<ActivationKind::kGeluErf>();
    case ActivationKind::kGeluTanh:
      return of_kind.template operator()<ActivationKind::kGeluTanh>();
  }
  return nullptr;
}

}  // namespace tileops::kernels::cuda
