// The rope kernels as the adapters see them (no CUDA header): one launch per call.
#pragma once

#include <cstdint>

#include "cuda/kernel_checks.hpp"
#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// The implementations of RopeFwdOp (Note [RoPE kernels] in rope.cuh).
enum class RopePath {
  kNeoxVector,         // rotate-half pairs, two 16-byte vectors R/2 apart
  kInterleavedVector,  // adjacent pairs, inside one 16-byte vector
  kGeneral,            // one pair at a time, either pairing
};

// Elements of `dtype` in one 16-byte vector.
constexpr std::int64_t rope_vector_elements(DType dtype) {
  return 16 / static_cast<std::int64_t>(dtype_size(dtype));
}

// One call: device pointers, contiguous tensors, sizes as in kernels/rope/interface.hpp.
struct RopeTensors {
  const void* positions = nullptr;
  void* query = nullptr;
  void* key = nullptr;
  const void* cache = nullptr;
  std::int64_t tokens = 0, q_heads = 0, k_heads = 0, head_size = 0, rotary_dim = 0, cache_rows = 0;
};

// Launches `path` on `stream` (a cudaStream_t) of the current device, asynchronously; checks the
// launch. The path must serve the call (its refusal said so); `check` is the checking mode's
// record, or null. Launches nothing when there is nothing to rotate.
void launch_rope(RopePath path, DType dtype, DType index_dtype, bool is_neox,
                 const RopeTensors& tensors, tileops::cuda::KernelCheckRecord* check, void* stream);

}  // namespace tileops::kernels::cuda
