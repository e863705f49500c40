// The grouped GEMM kernel as the adapters see it (no CUDA header): one launch per call.
#pragma once

#include <cstdint>

#include "cuda/kernel_checks.hpp"
#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// One call's operands on the device (kernels/gemm/interface.hpp): x [M, K] and out [M, N]
// contiguous, offsets [E] int32; w[g][k][n] at w + g * w_expert + k * w_k + n * w_n with
// (w_k, w_n) = (w_ld, 1) for a row-major w and (1, w_ld) for a column-major one, in elements.
struct GroupedGemmTensors {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* offsets = nullptr;
  void* out = nullptr;
  std::int64_t m = 0, n = 0, k = 0, groups = 0;
  std::int64_t w_expert = 0, w_ld = 0;
};

// Which kernel of Note [Grouped GEMM kernel] (grouped_gemm.cuh) serves a call.
struct GroupedGemmVariant {
  DType dtype = DType::kBFloat16;
  bool w_column_major = false;
  bool vector_loads = false;  // 16-byte cp.async loads: aligned pointers, K and N multiples of 8
};

// Sets the kernel's shared-memory limit on the current device; once per entry, before its first
// launch.
void prepare_grouped_gemm(const GroupedGemmVariant& variant);

// Launches the variant on `stream` (a cudaStream_t) of the current device, asynchronously, and
// checks the launch. `check` is the checking mode's record, or null. Launches nothing when the
// output is empty, unless the call is checked (offsets are checked whatever M and N are).
void launch_grouped_gemm(const GroupedGemmVariant& variant, const GroupedGemmTensors& tensors,
                         tileops::cuda::KernelCheckRecord* check, void* stream);

}  // namespace tileops::kernels::cuda
