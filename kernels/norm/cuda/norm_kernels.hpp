// The norm family's CUDA implementations (CUDA builds only): adapters from the kernel interfaces
// to the launches of norm_launch.hpp, one class per (op, path), with their applicability and
// precedence. Note [Norm kernels] in norm.cuh describes the paths; per op:
//
//   - <op>_warp_sm90: rows of up to 128 vectors, a logical warp per row;
//   - <op>_fixed_sm90 (RMSNorm, LayerNorm): float16 and bfloat16 rows of 4096, 8192 and 16384
//     elements, a block per row, the row in registers, its length fixed at compile time (Note
//     [Fixed rows] in norm_fixed.cuh);
//   - <op>_shared_sm90 (LayerNorm, FusedAddRMSNorm): rows of 8 to 32 KB, a block per row, the
//     row staged in shared memory;
//   - <op>_block_sm90: rows of up to 4096 vectors, a block per row, the row in registers;
//   - <op>_streaming_sm90: any 16-byte aligned rows, read in passes;
//   - <op>_general_sm90: anything: misaligned pointers, odd row lengths;
// each preferred over those below it (a vector is 16 bytes: 8 float16/bfloat16 or 4 float32
// elements). The vector paths refuse a misaligned pointer or a row length that is not a multiple of
// 16 bytes; the general path serves every call. It is not declared `general`: an interface has one
// general implementation, the CPU reference, and the CUDA paths order themselves by preferred_over
// (they never compete with the CPU's, which run on another device). The launch is planned when the
// entry is built, on its device, from the device's multiprocessor count and shared memory.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/norm/cuda/norm_launch.hpp"
#include "kernels/norm/interface.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

constexpr std::string_view norm_path_name(NormPath path) {
  switch (path) {
    case NormPath::kWarp:
      return "warp";
    case NormPath::kFixed:
      return "fixed";
    case NormPath::kShared:
      return "shared";
    case NormPath::kBlock:
      return "block";
    case NormPath::kStreaming:
      return "streaming";
    case NormPath::kGeneral:
      return "general";
  }
  return "";
}

// The key of an op's path: "<prefix>_<path>_sm90".
inline std::string norm_key(std::string_view prefix, NormPath path) {
  return fmt::format("{}_{}_sm90", prefix, norm_path_name(path));
}

// What the implementations of one path share: refusal, precedence, the plan built with the entry
// and the launch. `Impl::kKeyPrefix` names the op in the keys.
template <class Impl, class I, NormOp kOp, NormPath kPath>
class NormCudaKernel : public CudaKernel<Impl, I> {
 public:
  // RMSNorm's rows are faster in registers than staged (Note [Staged rows]): it has no shared path.
  static constexpr bool kHasSharedPath = kOp != NormOp::kRMS;
  // The fused op has no fixed-length kernel (Note [Fixed rows] in norm_fixed.cuh).
  static constexpr bool kHasFixedPath = kOp != NormOp::kFusedAddRMS;

  static std::vector<std::string> preferred_over() {
    std::vector<std::string> keys;
    for (NormPath later : {NormPath::kFixed, NormPath::kShared, NormPath::kBlock,
                           NormPath::kStreaming, NormPath::kGeneral})
      if (later > kPath && (later != NormPath::kShared || kHasSharedPath) &&
          (later != NormPath::kFixed || kHasFixedPath))
        keys.push_back(norm_key(Impl::kKeyPrefix, later));
    return keys;
  }

  static std::optional<std::string> refusal(const NormCall& call) {
    if (kPath == NormPath::kGeneral) return std::nullopt;
    const auto itemsize = static_cast<std::int64_t>(dtype_size(call.dtype));
    if (auto reason = vector_access_refusal(call.access.alignment, call.n * itemsize))
      return reason;
    const std::int64_t vectors = call.n / vector_elements(call.dtype);
    if (kPath == NormPath::kWarp && vectors > kNormWarpVectors)
      return fmt::format("rows of {} elements are {} vectors; a warp holds {} in registers", call.n,
                         vectors, kNormWarpVectors);
    if (kPath == NormPath::kFixed && !norm_fixed_row(kOp, call.dtype, call.n))
      return fmt::format(
          "rows of {} {} elements: this path has kernels for float16 and bfloat16 rows of 4096, "
          "8192 and 16384 elements",
          call.n, dtype_name(call.dtype));
    if (kPath == NormPath::kShared && call.n * itemsize > kNormSharedRowBytes)
      return fmt::format("rows of {} elements are {} bytes; this path stages rows of up to {}",
                         call.n, call.n * itemsize, kNormSharedRowBytes);
    if (kPath == NormPath::kShared &&
        call.n * itemsize <= norm_shared_row_bytes_above(kOp, call.dtype))
      return fmt::format(
          "rows of {} elements are {} bytes; the block path holds rows of up to {} bytes as fast",
          call.n, call.n * itemsize, norm_shared_row_bytes_above(kOp, call.dtype));
    if (kPath == NormPath::kBlock && vectors > kNormBlockVectors)
      return fmt::format("rows of {} elements are {} vectors; a block holds {} in registers",
                         call.n, vectors, kNormBlockVectors);
    return std::nullopt;
  }

  explicit NormCudaKernel(const NormCall& call)
      : CudaKernel<Impl, I>(call),
        launch_(plan_norm(kOp, kPath, call.dtype, call.n, device_facts(*call.device).sm_count,
                          device_facts(*call.device).smem_budget)) {}

 protected:
  // Launches on the call's stream; `elements` is x's element count.
  void launch(const KernelContext& ctx, NormTensors tensors, std::int64_t elements) const {
    tensors.rows = elements / this->call_.n;
    tensors.eps = static_cast<float>(this->call_.eps);
    launch_norm(launch_, tensors, tileops::cuda::native_stream(ctx.stream));
  }

 private:
  NormLaunch launch_;
};

template <class Impl, NormPath kPath>
class RMSNormCuda : public NormCudaKernel<Impl, RMSNormFwdInterface, NormOp::kRMS, kPath> {
 public:
  static constexpr std::string_view kKeyPrefix = "rms_norm";
  using NormCudaKernel<Impl, RMSNormFwdInterface, NormOp::kRMS, kPath>::NormCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& x, const Tensor* weight,
               Tensor& out) override {
    this->launch(
        ctx,
        {x.data_ptr(), nullptr, weight ? weight->data_ptr() : nullptr, nullptr, out.data_ptr()},
        x.numel());
  }
};

template <class Impl, NormPath kPath>
class LayerNormCuda : public NormCudaKernel<Impl, LayerNormFwdInterface, NormOp::kLayer, kPath> {
 public:
  static constexpr std::string_view kKeyPrefix = "layer_norm";
  using NormCudaKernel<Impl, LayerNormFwdInterface, NormOp::kLayer, kPath>::NormCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& x, const Tensor* weight, const Tensor* bias,
               Tensor& out) override {
    this->launch(ctx,
                 {x.data_ptr(), nullptr, weight ? weight->data_ptr() : nullptr,
                  bias ? bias->data_ptr() : nullptr, out.data_ptr()},
                 x.numel());
  }
};

template <class Impl, NormPath kPath>
class FusedAddRMSNormCuda
    : public NormCudaKernel<Impl, FusedAddRMSNormFwdInterface, NormOp::kFusedAddRMS, kPath> {
 public:
  static constexpr std::string_view kKeyPrefix = "fused_add_rms_norm";
  using NormCudaKernel<Impl, FusedAddRMSNormFwdInterface, NormOp::kFusedAddRMS,
                       kPath>::NormCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& x, Tensor& residual, const Tensor& weight,
               Tensor& out) override {
    this->launch(ctx,
                 {x.data_ptr(), residual.data_ptr(), weight.data_ptr(), nullptr, out.data_ptr()},
                 x.numel());
  }
};

// One class per implementation, so that messages and `tileops list` name it.
class RMSNormWarpSm90 final : public RMSNormCuda<RMSNormWarpSm90, NormPath::kWarp> {
  using RMSNormCuda::RMSNormCuda;
};
class RMSNormFixedSm90 final : public RMSNormCuda<RMSNormFixedSm90, NormPath::kFixed> {
  using RMSNormCuda::RMSNormCuda;
};
class RMSNormBlockSm90 final : public RMSNormCuda<RMSNormBlockSm90, NormPath::kBlock> {
  using RMSNormCuda::RMSNormCuda;
};
class RMSNormStreamingSm90 final : public RMSNormCuda<RMSNormStreamingSm90, NormPath::kStreaming> {
  using RMSNormCuda::RMSNormCuda;
};
class RMSNormGeneralSm90 final : public RMSNormCuda<RMSNormGeneralSm90, NormPath::kGeneral> {
  using RMSNormCuda::RMSNormCuda;
};

class LayerNormWarpSm90 final : public LayerNormCuda<LayerNormWarpSm90, NormPath::kWarp> {
  using LayerNormCuda::LayerNormCuda;
};
class LayerNormFixedSm90 final : public LayerNormCuda<LayerNormFixedSm90, NormPath::kFixed> {
  using LayerNormCuda::LayerNormCuda;
};
class LayerNormSharedSm90 final : public LayerNormCuda<LayerNormSharedSm90, NormPath::kShared> {
  using LayerNormCuda::LayerNormCuda;
};
class LayerNormBlockSm90 final : public LayerNormCuda<LayerNormBlockSm90, NormPath::kBlock> {
  using LayerNormCuda::LayerNormCuda;
};
class LayerNormStreamingSm90 final
    : public LayerNormCuda<LayerNormStreamingSm90, NormPath::kStreaming> {
  using LayerNormCuda::LayerNormCuda;
};
class LayerNormGeneralSm90 final : public LayerNormCuda<LayerNormGeneralSm90, NormPath::kGeneral> {
  using LayerNormCuda::LayerNormCuda;
};

class FusedAddRMSNormWarpSm90 final
    : public FusedAddRMSNormCuda<FusedAddRMSNormWarpSm90, NormPath::kWarp> {
  using FusedAddRMSNormCuda::FusedAddRMSNormCuda;
};
class FusedAddRMSNormSharedSm90 final
    : public FusedAddRMSNormCuda<FusedAddRMSNormSharedSm90, NormPath::kShared> {
  using FusedAddRMSNormCuda::FusedAddRMSNormCuda;
};
class FusedAddRMSNormBlockSm90 final
    : public FusedAddRMSNormCuda<FusedAddRMSNormBlockSm90, NormPath::kBlock> {
  using FusedAddRMSNormCuda::FusedAddRMSNormCuda;
};
class FusedAddRMSNormStreamingSm90 final
    : public FusedAddRMSNormCuda<FusedAddRMSNormStreamingSm90, NormPath::kStreaming> {
  using FusedAddRMSNormCuda::FusedAddRMSNormCuda;
};
class FusedAddRMSNormGeneralSm90 final
    : public FusedAddRMSNormCuda<FusedAddRMSNormGeneralSm90, NormPath::kGeneral> {
  using FusedAddRMSNormCuda::FusedAddRMSNormCuda;
};

}  // namespace tileops::kernels::cuda
