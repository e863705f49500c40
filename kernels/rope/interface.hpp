// The rope family's kernel interface and its call spec: the contract between RopeFwdOp and its
// kernels. Every tensor a kernel receives is contiguous and on the call's device; query and key
// are rotated in place.
#pragma once

#include <cstdint>
#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// One rotary embedding call: heads of `head_size` (D) columns of `dtype`, of which the first
// `rotary_dim` (R) are rotated, in pairs as `is_neox` says, by a cache of `dtype` indexed by
// positions of `index_dtype`. R and D are a model's constants and select the kernel's layout; the
// token count, the head counts and the cache's length only index data and stay out.
struct RopeCall : CallSpecOf<RopeCall> {
  DType dtype = DType::kFloat32;
  DType index_dtype = DType::kInt64;
  bool is_neox = true;
  std::int64_t rotary_dim = 0;
  std::int64_t head_size = 0;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("index_dtype", index_dtype),
                      field("is_neox", is_neox), field("rotary_dim", rotary_dim),
                      field("head_size", head_size), field("access", access));
  }
};

class RopeFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "rope";
  using Call = RopeCall;
  // For token n, p = positions[n], i in [0, R / 2): cos_i = cos_sin_cache[p, i], sin_i =
  // cos_sin_cache[p, R / 2 + i]; every head of query [N, Hq, D] and key [N, Hk, D] has its pairs
  // (x1, x2) <- (x1 cos_i - x2 sin_i, x2 cos_i + x1 sin_i), in place. Columns R..D-1 are neither
  // read nor written. A position outside [0, P) is never read through: the CPU kernel raises
  // CheckError before writing; a CUDA kernel leaves that token's rows as they were and raises
  // only in the checking mode (Note [Kernel checking mode] in src/cuda/kernel_checks.hpp).
  // Query and key are the caller's tensors, written through: a Tensor is a handle, and a const one
  // still writes its elements.
  virtual void forward(const KernelContext& ctx, const Tensor& positions, const Tensor& query,
                       const Tensor& key, const Tensor& cos_sin_cache) = 0;
};

}  // namespace tileops::kernels
