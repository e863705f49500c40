// The CUTLASS grouped GEMM as the adapters see it (no CUDA or CUTLASS header): Note [CUTLASS
// grouped GEMM] in grouped_gemm_cutlass.cuh. One instantiation per element type and weight layout,
// each in its own translation unit (grouped_gemm_cutlass_<type>_<layout>.cu): a CUTLASS kernel
// takes about a minute to compile, and the four compile in parallel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/kernel_checks.hpp"
#include "kernels/gemm/cuda/grouped_gemm_launch.hpp"
#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

template <DType kDType, bool kWColumnMajor>
struct CutlassGroupedGemm {
  // Bytes of the workspace one call needs: CUTLASS's and the per-group arrays.
  static std::size_t workspace_bytes(std::int64_t groups, int device, int sm_count);
  // Once per entry, on its device, before its first launch.
  static void prepare();
  // Launches the arranging kernel and CUTLASS's on `stream` (a cudaStream_t) of the current device,
  // asynchronously; `workspace` holds workspace_bytes(tensors.groups, ...) bytes on the device.
  static void launch(const GroupedGemmTensors& tensors, void* workspace, int device, int sm_count,
                     tileops::cuda::KernelCheckRecord* check, void* stream);
};

extern template struct CutlassGroupedGemm<DType::kBFloat16, false>;
extern template struct CutlassGroupedGemm<DType::kBFloat16, true>;
extern template struct CutlassGroupedGemm<DType::kFloat16, false>;
extern template struct CutlassGroupedGemm<DType::kFloat16, true>;

// Calls f(CutlassGroupedGemm<dtype, w_column_major>{}) for a float16 or bfloat16 variant.
template <class F>
void dispatch_cutlass_grouped_gemm(const GroupedGemmVariant& v, F&& f) {
  if (v.dtype == DType::kFloat16) {
    if (v.w_column_major) return f(CutlassGroupedGemm<DType::kFloat16, true>{});
    return f(CutlassGroupedGemm<DType::kFloat16, false>{});
  }
  if (v.w_column_major) return f(CutlassGroupedGemm<DType::kBFloat16, true>{});
  return f(CutlassGroupedGemm<DType::kBFloat16, false>{});
}

}  // namespace tileops::kernels::cuda
