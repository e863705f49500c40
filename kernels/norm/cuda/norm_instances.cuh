// What norm_<op>.cu share: the kernel of one op for a path, dtype and lanes per row.
#pragma once

#include <string>

#include "kernels/norm/cuda/norm.cuh"
#include "kernels/norm/cuda/norm_few_rows.cuh"
#include "kernels/norm/cuda/norm_fixed.cuh"
#include "kernels/norm/cuda/norm_instances.hpp"
#include "kernels/norm/cuda/norm_staged.cuh"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {

template <NormKind K, class T>
const void* norm_kernel(NormPath path, int lanes, int few_rows_cluster) {
  constexpr int kVpt = kNormVectorsPerLane;
  switch (path) {
    case NormPath::kWarp:
      return lanes == kNarrowLanes
                 ? reinterpret_cast<const void*>(&norm_rows_kernel<K, T, kNarrowLanes, kVpt>)
                 : reinterpret_cast<const void*>(&norm_rows_kernel<K, T, 32, kVpt>);
    case NormPath::kFixed:
    case NormPath::kShared:
    case NormPath::kBlock:
      switch (few_rows_cluster) {
        case 1:
          return reinterpret_cast<const void*>(&norm_few_rows_kernel<K, T, 1>);
        case 2:
          return reinterpret_cast<const void*>(&norm_few_rows_kernel<K, T, 2>);
        case 4:
          return reinterpret_cast<const void*>(&norm_few_rows_kernel<K, T, 4>);
        case 8:
          return reinterpret_cast<const void*>(&norm_few_rows_kernel<K, T, 8>);
        default:
          break;
      }
      if (path == NormPath::kFixed) return nullptr;  // norm_fixed_kernel
      if (path == NormPath::kShared) {
        // RMSNorm has no shared path (Note [Staged rows]): no instantiation.
        if constexpr (K != NormKind::kRMS)
          return reinterpret_cast<const void*>(&norm_staged_kernel<K, T>);
        return nullptr;
      }
      return reinterpret_cast<const void*>(&norm_rows_kernel<K, T, 0, kVpt>);
    case NormPath::kStreaming:
      return reinterpret_cast<const void*>(&norm_stream_kernel<K, T, Vec<T>::kSize>);
    case NormPath::kGeneral:
      return reinterpret_cast<const void*>(&norm_stream_kernel<K, T, 1>);
  }
  return nullptr;
}

template <NormKind K>
const void* norm_kernel(NormPath path, DType dtype, int lanes, int few_rows_cluster) {
  switch (dtype) {
    case DType::kFloat16:
      return norm_kernel<K, __half>(path, lanes, few_rows_cluster);
    case DType::kBFloat16:
      return norm_kernel<K, __nv_bfloat16>(path, lanes, few_rows_cluster);
    case DType::kFloat32:
      return norm_kernel<K, float>(path, lanes, few_rows_cluster);
    default:
      throw CheckError("norm (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16 or float32");
  }
}

template <NormKind K>
NormFixedKernel norm_fixed_kernel(DType dtype, std::int64_t n) {
  switch (dtype) {
    case DType::kFloat16:
      return norm_fixed_kernel<K, __half>(n);
    case DType::kBFloat16:
      return norm_fixed_kernel<K, __nv_bfloat16>(n);
    default:
      return {};
  }
}

}  // namespace tileops::kernels::cuda
