// The CUTLASS GEMM candidate as the cuBLASLt entry sees it (no CUDA or CUTLASS header): Note
// [CUTLASS GEMM candidate] in gemm_cutlass.cuh. bfloat16 only, one instantiation per layout of b,
// each in its own translation unit (gemm_cutlass_bf16_<layout>.cu), compiled in parallel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// out [M, N] (row-major, ld N) = a [M, K] (row-major, ld lda) @ b [K, N]: column-major (the
// transposed view of a row-major [N, K], ld ldb >= K, as an nn.Linear weight) or row-major (ld
// ldb >= N). Pointers 16-byte aligned, lda, ldb, N and K multiples of 8 elements.
struct CutlassGemmProblem {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* out = nullptr;
};

// How the tuning store and the entry's detail name the candidate.
inline constexpr const char* kCutlassGemmName = "cutlass cooperative 128x256x64";

template <DType kDType, bool kBColumnMajor>
struct CutlassGemm {
  // Bytes of CUTLASS's workspace for `p` (0 when it needs none).
  static std::size_t workspace_bytes(const CutlassGemmProblem& p, int sm_count);
  // Enqueues the product on `stream` (a cudaStream_t of `device`, the current device); false,
  // launching nothing, when CUTLASS cannot implement `p`. Throws CudaError when the launch fails.
  static bool launch(const CutlassGemmProblem& p, void* workspace, int device, int sm_count,
                     void* stream);
};

extern template struct CutlassGemm<DType::kBFloat16, false>;
extern template struct CutlassGemm<DType::kBFloat16, true>;

// Calls f(CutlassGemm<bfloat16, b_column_major>{}).
template <class F>
decltype(auto) dispatch_cutlass_gemm(bool b_column_major, F&& f) {
  if (b_column_major) return f(CutlassGemm<DType::kBFloat16, true>{});
  return f(CutlassGemm<DType::kBFloat16, false>{});
}

}  // namespace tileops::kernels::cuda
