// The rope family's CUDA implementations (CUDA builds only): adapters from RopeFwdInterface to
// launch_rope, one class per path (Note [RoPE kernels] in rope.cuh):
//
//   rope_neox_vector_sm90         is_neox, R/2 a multiple of a vector       preferred over general
//   rope_interleaved_vector_sm90  not is_neox, R a multiple of a vector     preferred over general
//   rope_general_sm90             anything: misaligned pointers, any even R
//
// (a vector is 16 bytes: 8 float16/bfloat16 or 4 float32 elements). The vector paths also need
// 16-byte aligned pointers and heads of a multiple of 16 bytes. As for the norm family, the general
// CUDA path is not declared `general` (the CPU reference is; Note in norm_kernels.hpp).
//
// Positions outside the cache are skipped on the device; in the checking mode the call raises the
// CPU kernel's CheckError for the first of them (Note [Kernel checking mode] in
// src/cuda/kernel_checks.hpp).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/kernel_checks.hpp"
#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/rope/cuda/rope_launch.hpp"
#include "kernels/rope/interface.hpp"
#include "kernels/rope/rope_messages.hpp"

namespace tileops::kernels::cuda {

// The refusal of a vector path for `call`, nullopt when it serves it.
inline std::optional<std::string> rope_vector_refusal(RopePath path, const RopeCall& call) {
  const bool neox = path == RopePath::kNeoxVector;
  if (call.is_neox != neox)
    return neox ? std::string("pairs are interleaved (is_neox false); this path rotates halves")
                : std::string(
                      "pairs are rotate-half (is_neox true); this path rotates adjacent "
                      "pairs");
  const auto itemsize = static_cast<std::int64_t>(dtype_size(call.dtype));
  if (auto reason = vector_access_refusal(call.access.alignment, call.head_size * itemsize))
    return reason;
  const std::int64_t v = rope_vector_elements(call.dtype);
  if (neox && (call.rotary_dim / 2) % v != 0)
    return fmt::format("rotates 16-byte vectors R/2 apart and R/2 = {} is not a multiple of {}",
                       call.rotary_dim / 2, v);
  if (!neox && call.rotary_dim % v != 0)
    return fmt::format("rotates pairs inside 16-byte vectors and R = {} is not a multiple of {}",
                       call.rotary_dim, v);
  return std::nullopt;
}

template <class Impl, RopePath kPath>
class RopeCuda : public CudaKernel<Impl, RopeFwdInterface> {
 public:
  static std::vector<std::string> preferred_over() {
    if (kPath == RopePath::kGeneral) return {};
    return {"rope_general_sm90"};
  }

  static std::optional<std::string> refusal(const RopeCall& call) {
    if (kPath == RopePath::kGeneral) return std::nullopt;
    return rope_vector_refusal(kPath, call);
  }

  using CudaKernel<Impl, RopeFwdInterface>::CudaKernel;

  void forward(const KernelContext& ctx, const Tensor& positions, const Tensor& query,
               const Tensor& key, const Tensor& cos_sin_cache) override {
    const RopeTensors t{positions.data_ptr(),     query.data_ptr(),  key.data_ptr(),
                        cos_sin_cache.data_ptr(), positions.numel(), query.shape()[1],
                        key.shape()[1],           query.shape()[2],  cos_sin_cache.shape()[1],
                        cos_sin_cache.shape()[0]};
    if (t.tokens == 0 || t.rotary_dim == 0 || t.q_heads + t.k_heads == 0) return;
    void* stream = tileops::cuda::native_stream(ctx.stream);
    tileops::cuda::KernelCheckScope checks(ctx.device.index, stream);
    const RopeCall& call = this->call_;
    launch_rope(kPath, call.dtype, call.index_dtype, call.is_neox, t, checks.record(), stream);
    checks.raise_if_reported([&](std::int64_t token, std::int64_t position) {
      return bad_position_message(token, position, t.cache_rows);
    });
  }
};

// One class per implementation, so that messages and `tileops list` name it.
class RopeNeoxVectorSm90 final : public RopeCuda<RopeNeoxVectorSm90, RopePath::kNeoxVector> {
  using RopeCuda::RopeCuda;
};
class RopeInterleavedVectorSm90 final
    : public RopeCuda<RopeInterleavedVectorSm90, RopePath::kInterleavedVector> {
  using RopeCuda::RopeCuda;
};
class RopeGeneralSm90 final : public RopeCuda<RopeGeneralSm90, RopePath::kGeneral> {
  using RopeCuda::RopeCuda;
};

}  // namespace tileops::kernels::cuda
