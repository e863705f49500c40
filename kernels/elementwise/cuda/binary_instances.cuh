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

template <BinaryKind kKind>
const void* binary_kernel(BinaryPath path, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return binary_kernel<kKind, __half>(path);
    case DType::kBFloat16:
      return binary_kernel<kKind, __nv_bfloat16>(path);
    case DType::kFloat32:
      return binary_kernel<kKind, float>(path);
    case DType::kInt32:
      return binary_kernel<kKind, std::int32_t>(path);
    case DType::kInt64:
      return binary_kernel<kKind, std::int64_t>(path);
    default:
      return nullptr;
  }
}

}  // namespace tileops::kernels::cuda
