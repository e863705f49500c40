// The grouped GEMM's CUDA implementations (CUDA builds only), adapters from
// GroupedGemmFwdInterface to the kernels:
//
//   grouped_gemm_cutlass_sm90  CUTLASS's sm90 grouped GEMM (Note [CUTLASS grouped GEMM] in
//                              grouped_gemm_cutlass.cuh): what the vector variant serves but
//                              K = 0; preferred over both wmma variants
//
// and the wmma kernel's two variants (Note [Grouped GEMM kernel] in grouped_gemm.cuh):
//
//   grouped_gemm_sm90          16-byte aligned pointers, leading dimension and expert stride of
//                              w, K and N multiples of 8: cp.async 16-byte loads, preferred over
//                              the general variant
//   grouped_gemm_general_sm90  anything: misaligned views, odd K and N (element-wise loads)
//
// As in the other families (norm_kernels.hpp), the general CUDA path is not declared `general`:
// the CPU kernel is the interface's general implementation. Offsets that break the contract are
// clamped on the device; in the checking mode the call raises the CPU kernel's CheckError for the
// first of them.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cuda/kernel_checks.hpp"
#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/gemm/cuda/grouped_gemm_cutlass_launch.hpp"
#include "kernels/gemm/cuda/grouped_gemm_launch.hpp"
#include "kernels/gemm/grouped_gemm_messages.hpp"
#include "kernels/gemm/interface.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

// Why the vector variant cannot serve `call`, nullopt when it can. Rows of x and out, and w's
// rows (row-major) or columns (column-major), start every K or N elements.
inline std::optional<std::string> grouped_gemm_vector_refusal(const GroupedGemmCall& call) {
  const auto itemsize = static_cast<std::int64_t>(dtype_size(call.dtype));
  if (auto reason = vector_access_refusal(call.access.alignment, call.k * itemsize)) return reason;
  if (auto reason = vector_access_refusal(call.access.alignment, call.n * itemsize)) return reason;
  return std::nullopt;
}

// The launch's view of one call (GroupedGemmFwdInterface::forward's tensors).
inline GroupedGemmTensors grouped_gemm_tensors(const Tensor& x, const Tensor& w,
                                               const Tensor& offsets, Tensor& out,
                                               bool w_column_major) {
  const Shape& strides = w.strides();
  return {x.data_ptr(),       w.data_ptr(),
          offsets.data_ptr(), out.data_ptr(),
          out.shape()[0],     out.shape()[1],
          x.shape()[1],       w.shape()[0],
          strides[0],         w_column_major ? strides[2] : strides[1]};
}

template <class Impl, bool kVectorLoads>
class GroupedGemmCuda : public CudaKernel<Impl, GroupedGemmFwdInterface> {
 public:
  static std::vector<std::string> preferred_over() {
    if (!kVectorLoads) return {};
    return {"grouped_gemm_general_sm90"};
  }

  static std::optional<std::string> refusal(const GroupedGemmCall& call) {
    if (call.dtype != DType::kFloat16 && call.dtype != DType::kBFloat16)
      return fmt::format("dtype {} is not float16 or bfloat16", dtype_name(call.dtype));
    if (!kVectorLoads) return std::nullopt;
    return grouped_gemm_vector_refusal(call);
  }

  explicit GroupedGemmCuda(const GroupedGemmCall& call)
      : CudaKernel<Impl, GroupedGemmFwdInterface>(call),
        variant_{call.dtype, call.w_column_major, kVectorLoads} {
    prepare_grouped_gemm(variant_);
  }

  void forward(const KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& offsets,
               Tensor& out) override {
    const GroupedGemmTensors t = grouped_gemm_tensors(x, w, offsets, out, variant_.w_column_major);
    void* stream = tileops::cuda::native_stream(ctx.stream);
    tileops::cuda::KernelCheckScope checks(ctx.device.index, stream);
    launch_grouped_gemm(variant_, t, checks.record(), stream);
    checks.raise_if_reported([&](std::int64_t group, std::int64_t offset) {
      return bad_offset_message(group, offset, t.m);
    });
  }

 private:
  GroupedGemmVariant variant_;
};

// One class per implementation, so that messages and `tileops list` name it.
class GroupedGemmSm90 final : public GroupedGemmCuda<GroupedGemmSm90, true> {
  using GroupedGemmCuda::GroupedGemmCuda;
};
class GroupedGemmGeneralSm90 final : public GroupedGemmCuda<GroupedGemmGeneralSm90, false> {
  using GroupedGemmCuda::GroupedGemmCuda;
};

class GroupedGemmCutlassSm90 final
    : public CudaKernel<GroupedGemmCutlassSm90, GroupedGemmFwdInterface> {
 public:
  static std::vector<std::string> preferred_over() {
    return {"grouped_gemm_sm90", "grouped_gemm_general_sm90"};
  }

  // TMA's 16-byte aligned addresses and strides are the vector variant's condition; a product
  // over K = 0 has no main loop for CUTLASS to run (the wmma kernel writes its zeros); CUTLASS's
  // problem shapes and group count are ints (the wmma kernel counts in 64 bits).
  static std::optional<std::string> refusal(const GroupedGemmCall& call) {
    if (auto reason = GroupedGemmCuda<GroupedGemmSm90, true>::refusal(call)) return reason;
    if (call.k == 0) return std::string("K = 0: no main loop to run");
    if (!fits_int(call.n) || !fits_int(call.k) || !fits_int(call.groups))
      return fmt::format("N = {}, K = {} or {} groups past CUTLASS's int problem shapes", call.n,
                         call.k, call.groups);
    return std::nullopt;
  }

  explicit GroupedGemmCutlassSm90(const GroupedGemmCall& call)
      : CudaKernel(call),
        variant_{call.dtype, call.w_column_major, true},
        device_(call.device->index),
        sm_count_(device_facts(*call.device).sm_count) {
    dispatch_cutlass_grouped_gemm(variant_, [&](auto gemm) {
      gemm.prepare();
      workspace_bytes_ = gemm.workspace_bytes(call.groups, device_, sm_count_);
    });
  }

  void forward(const KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& offsets,
               Tensor& out) override {
    const GroupedGemmTensors t = grouped_gemm_tensors(x, w, offsets, out, variant_.w_column_major);
    // A group's rows are an int of CUTLASS's problem shape; the call spec does not hold M, so the
    // refusal cannot see it.
    if (!fits_int(t.m))
      throw CheckError(
          fmt::format("x has {} rows, past the int rows of CUTLASS's problem shapes "
                      "(grouped_gemm_cutlass_sm90)",
                      t.m));
    // The per-group arrays and CUTLASS's workspace, stream-ordered (Note [CUTLASS grouped GEMM]).
    const Tensor workspace = Tensor::empty(Shape{static_cast<std::int64_t>(workspace_bytes_)},
                                           DType::kUInt8, ctx.device, &ctx.stream);
    void* stream = tileops::cuda::native_stream(ctx.stream);
    tileops::cuda::KernelCheckScope checks(ctx.device.index, stream);
    dispatch_cutlass_grouped_gemm(variant_, [&](auto gemm) {
      gemm.launch(t, workspace.data_ptr(), device_, sm_count_, checks.record(), stream);
    });
    checks.raise_if_reported([&](std::int64_t group, std::int64_t offset) {
      return bad_offset_message(group, offset, t.m);
    });
  }

 private:
  GroupedGemmVariant variant_;
  int device_;
  int sm_count_;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tileops::kernels::cuda
