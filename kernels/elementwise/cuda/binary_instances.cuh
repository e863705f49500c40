// The instantiations of one binary op for every path and dtype; included by binary_add.cu and
// binary_mul.cu, one per op so that the two compile in parallel.
#pragma once

#include <cstdint>

#include "kernels/elementwise/cuda/binary.cuh"
#include "kernels/elementwise/cuda/binary_launch.hpp"

namespace tileops::kernels::cuda {

template <BinaryKind kKind, class T>
const void* binary_kernel(BinaryPath path) {
  switch (path) {
    case BinaryPath::kVector:
      return reinterpret_cast<const void*>(&binary_vector_kernel<kKind, T>);
    case BinaryPath::kRows:
      return reinterpret_cast<const void*>(&binary_rows_kernel<kKind, T, true>);
    case BinaryPath::kGeneral:
      return reinterpret_cast<const void*>(&binary_rows_kernel<kKind, T, false>);
  }
  return nullptr;
}

template <BinaryKind kKind, class T>
const void* repeated_row_kernel(bool row_is_b) {
  return row_is_b ? reinterpret_cast<const void*>(&binary_repeated_row_kernel<kKind, T, true>)
                  : reinterpret_cast<const void*>(&binary_repeated_row_kernel<kKind, T, false>);
}

template <BinaryKind kKind, class T>
const void* row_scalar_kernel(bool scalar_is_b) {
  return scalar_is_b ? reinterpret_cast<const void*>(&binary_row_scalar_kernel<kKind, T, true>)
                     : reinterpret_cast<const void*>(&binary_row_scalar_kernel<kKind, T, false>);
}

// `instance`'s kernel for `dtype`: instance.template operator()<T>() for T of the dtype.
template <class Instance>
const void* for_dtype(DType dtype, const Instance& instance) {
  switch (dtype) {
    case DType::kFloat16:
      return instance.template operator()<__half>();
    case DType::kBFloat16:
      return instance.template operator()<__nv_bfloat16>();
    case DType::kFloat32:
      return instance.template operator()<float>();
    case DType::kInt32:
      return instance.template operator()<std::int32_t>();
    case DType::kInt64:
      return instance.template operator()<std::int64_t>();
    default:
      return nullptr;
  }
}

template <BinaryKind kKind>
const void* binary_kernel(BinaryPath path, DType dtype) {
  return for_dtype(dtype, [path]<class T>() { return binary_kernel<kKind, T>(path); });
}

template <BinaryKind kKind>
const void* repeated_row_kernel(bool row_is_b, DType dtype) {
  return for_dtype(dtype,
                   [row_is_b]<class T>() { return repeated_row_kernel<kKind, T>(row_is_b); });
}

template <BinaryKind kKind>
const void* row_scalar_kernel(bool scalar_is_b, DType dtype) {
  return for_dtype(dtype,
                   [scalar_is_b]<class T>() { return row_scalar_kernel<kKind, T>(scalar_is_b); });
}

}  // namespace tileops::kernels::cuda
