// The reduction family's CUDA implementations (CUDA builds only): adapters from the kernel
// interfaces to the launches of softmax_launch.hpp and reduce_launch.hpp, one class per (op,
// path), with their applicability and precedence. Note [Softmax kernels] in softmax.cuh and Note
// [Reduction kernels] in reduce_axes.cuh describe the paths. Per op:
//
//   softmax / log_softmax
//     <op>_registers_sm90  the last axis, lengths (by bucket) a block holds   over online, general
//     <op>_online_sm90     the last axis, any length                          over general
//     <op>_strided_sm90    another axis, any alignment                        over general
//     <op>_general_sm90    anything, one element per access
//   sum / mean / amax
//     <op>_rows_sm90       the trailing axes, some kept (lengths: plan)       over vector, general
//     <op>_vector_sm90     any axes                                           over general
//     <op>_general_sm90    any axes, one element per access
//
// ("over": preferred over). The vector paths refuse a pointer that is not 16-byte aligned and run
// lengths that are no multiple of a vector one element at a time, since the call specs do not key
// on lengths. The general paths are not declared `general`: an interface has one general
// implementation, the CPU reference (as for the norm family, kernels/norm/cuda/norm_kernels.hpp).
// Every call is planned on the host from its shape and the device's multiprocessor count; scratch
// (the partials of a split row or column) comes from the library's stream-ordered allocator on the
// call's stream.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/reduction/cuda/reduce_launch.hpp"
#include "kernels/reduction/cuda/softmax_launch.hpp"
#include "kernels/reduction/interface.hpp"

namespace tileops::kernels::cuda {

// Device memory for a launch's partials, released in the stream's order when the call returns.
inline Tensor reduction_scratch(const KernelContext& ctx, std::int64_t bytes) {
  if (bytes == 0) return Tensor();
  return Tensor::empty(Shape{(bytes + 7) / 8}, DType::kInt64, ctx.device, &ctx.stream);
}

constexpr std::string_view softmax_path_name(SoftmaxPath path) {
  switch (path) {
    case SoftmaxPath::kRegisters:
      return "registers";
    case SoftmaxPath::kOnline:
      return "online";
    case SoftmaxPath::kStrided:
      return "strided";
    case SoftmaxPath::kGeneral:
      return "general";
  }
  return "";
}

// ---- softmax, log_softmax ----

template <class Impl, class I, bool kLog, SoftmaxPath kPath>
class SoftmaxCudaKernel : public CudaKernel<Impl, I> {
 public:
  static constexpr std::string_view kKeyPrefix = kLog ? "log_softmax" : "softmax";

  static std::vector<std::string> preferred_over() {
    auto key = [](SoftmaxPath path) {
      return fmt::format("{}_{}_sm90", kKeyPrefix, softmax_path_name(path));
    };
    switch (kPath) {
      case SoftmaxPath::kRegisters:
        return {key(SoftmaxPath::kOnline), key(SoftmaxPath::kGeneral)};
      case SoftmaxPath::kOnline:
      case SoftmaxPath::kStrided:
        return {key(SoftmaxPath::kGeneral)};
      case SoftmaxPath::kGeneral:
        break;
    }
    return {};
  }

  static std::optional<std::string> refusal(const SoftmaxCall& call) {
    if constexpr (kPath == SoftmaxPath::kGeneral) {
      return std::nullopt;
    } else if constexpr (kPath == SoftmaxPath::kStrided) {
      if (call.innermost) return "the axis is the last one; this path serves the other axes";
      return std::nullopt;
    } else {
      if (!call.innermost) return "the axis is not the last one; this path serves the last axis";
      if (auto reason = vector_access_refusal(call.access.alignment, 0)) return reason;
      if (kPath == SoftmaxPath::kRegisters) {
        const std::int64_t capacity = softmax_register_capacity(call.dtype);
        if (call.axis_bucket > 62 || (std::int64_t{1} << call.axis_bucket) - 1 > capacity)
          return fmt::format(
              "axes of up to {} elements (bucket {}); a block holds {} {} elements in registers",
              call.axis_bucket > 62 ? std::int64_t{-1} : (std::int64_t{1} << call.axis_bucket) - 1,
              call.axis_bucket, capacity, dtype_name(call.dtype));
      }
      return std::nullopt;
    }
  }

  explicit SoftmaxCudaKernel(const typename I::Call& call) : CudaKernel<Impl, I>(call) {
    // The register path stages long rows in shared memory (Note [Staged rows]).
    if constexpr (kPath == SoftmaxPath::kRegisters) {
      if constexpr (kLog) {
        allow_log_softmax_staged(call.dtype);
      } else {
        allow_softmax_staged(call.dtype);
      }
    }
  }

  void forward(const KernelContext& ctx, const Tensor& x, std::int64_t dim, Tensor& out) override {
    SoftmaxShape shape;
    shape.rows = 1;
    for (std::int64_t a = 0; a < dim; ++a) shape.rows *= x.shape()[static_cast<std::size_t>(a)];
    shape.length = x.shape()[static_cast<std::size_t>(dim)];
    for (std::size_t a = static_cast<std::size_t>(dim) + 1; a < x.dim(); ++a)
      shape.inner *= x.shape()[a];
    const SoftmaxLaunch launch = plan_softmax(kPath, x.dtype(), shape, ctx.facts.sm_count);
    if (launch.kernel == SoftmaxKernel::kNone) return;  // an empty tensor: nothing to launch
    const Tensor scratch = reduction_scratch(ctx, launch.scratch_bytes);
    void* stream = tileops::cuda::native_stream(ctx.stream);
    void* partials = scratch.defined() ? scratch.data_ptr() : nullptr;
    if constexpr (kLog) {
      launch_log_softmax_fwd(launch, x.dtype(), shape, x.data_ptr(), out.data_ptr(), partials,
                             stream);
    } else {
      launch_softmax_fwd(launch, x.dtype(), shape, x.data_ptr(), out.data_ptr(), partials, stream);
    }
  }
};

template <class Impl, SoftmaxPath kPath>
using SoftmaxCuda = SoftmaxCudaKernel<Impl, SoftmaxFwdInterface, false, kPath>;
template <class Impl, SoftmaxPath kPath>
using LogSoftmaxCuda = SoftmaxCudaKernel<Impl, LogSoftmaxFwdInterface, true, kPath>;

// One class per implementation, so that messages and `tileops list` name it.
class SoftmaxRegistersSm90 final
    : public SoftmaxCuda<SoftmaxRegistersSm90, SoftmaxPath::kRegisters> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class SoftmaxOnlineSm90 final : public SoftmaxCuda<SoftmaxOnlineSm90, SoftmaxPath::kOnline> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class SoftmaxStridedSm90 final : public SoftmaxCuda<SoftmaxStridedSm90, SoftmaxPath::kStrided> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class SoftmaxGeneralSm90 final : public SoftmaxCuda<SoftmaxGeneralSm90, SoftmaxPath::kGeneral> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class LogSoftmaxRegistersSm90 final
    : public LogSoftmaxCuda<LogSoftmaxRegistersSm90, SoftmaxPath::kRegisters> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class LogSoftmaxOnlineSm90 final
    : public LogSoftmaxCuda<LogSoftmaxOnlineSm90, SoftmaxPath::kOnline> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class LogSoftmaxStridedSm90 final
    : public LogSoftmaxCuda<LogSoftmaxStridedSm90, SoftmaxPath::kStrided> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};
class LogSoftmaxGeneralSm90 final
    : public LogSoftmaxCuda<LogSoftmaxGeneralSm90, SoftmaxPath::kGeneral> {
  using SoftmaxCudaKernel::SoftmaxCudaKernel;
};

// ---- sum, mean, amax ----

constexpr std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMean:
      return "mean";
    case ReduceOp::kAmax:
      return "amax";
  }
  return "";
}

enum class ReducePath { kRows, kVector, kGeneral };

// Why the rows paths do not serve a call: they want the reduced axes to be the trailing ones with
// at least one kept axis before them (x is [rows, n]) and 16-byte aligned pointers. Row lengths
// are not in the call spec; plan_reduce_rows gives the lengths a block does not hold the vector
// plan (Note [Held rows] in reduce_axes.cuh).
inline std::optional<std::string> rows_refusal(const ReductionCall& call) {
  const std::uint64_t all =
      call.rank >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << call.rank) - 1;
  const std::uint64_t mask = call.reduced_mask & all;
  // A trailing run: adding its lowest bit carries through to bit `rank`.
  const bool trailing = mask != 0 && ((mask + (mask & (~mask + 1))) & all) == 0;
  if (!trailing)
    return "the reduced axes are not the trailing ones; this path serves rows over the last axes";
  if (mask == all) return "every axis is reduced; this path serves rows over the last axes";
  return vector_access_refusal(call.access.alignment, 0);
}

template <class Impl, class I, ReduceOp kOp, ReducePath kPath>
class AxesReductionCuda : public CudaKernel<Impl, I> {
 public:
  static std::vector<std::string> preferred_over() {
    const std::string_view op = reduce_op_name(kOp);
    if (kPath == ReducePath::kRows)
      return {fmt::format("{}_vector_sm90", op), fmt::format("{}_general_sm90", op)};
    if (kPath == ReducePath::kVector) return {fmt::format("{}_general_sm90", op)};
    return {};
  }

  static std::optional<std::string> refusal(const ReductionCall& call) {
    if (auto reason = axis_groups_refusal(call.rank, call.reduced_mask)) return reason;
    if (kPath == ReducePath::kRows) return rows_refusal(call);
    if (kPath == ReducePath::kVector) return vector_access_refusal(call.access.alignment, 0);
    return std::nullopt;
  }

  using CudaKernel<Impl, I>::CudaKernel;

  void forward(const KernelContext& ctx, const Tensor& x, const std::vector<bool>& reduced,
               Tensor& out) override {
    const int sms = ctx.facts.sm_count;
    const ReduceLaunch launch =
        kPath == ReducePath::kRows
            ? plan_reduce_rows(x.dtype(), x.shape(), reduced, sms)
            : plan_reduce(x.dtype(), x.shape(), reduced, kPath == ReducePath::kVector, sms);
    if (launch.kernel == ReduceKernel::kNone) return;  // no output: nothing to launch
    const Tensor scratch = reduction_scratch(ctx, launch.scratch_bytes);
    void* partials = scratch.defined() ? scratch.data_ptr() : nullptr;
    void* stream = tileops::cuda::native_stream(ctx.stream);
    switch (kOp) {
      case ReduceOp::kSum:
        return launch_sum_fwd(launch, x.dtype(), x.data_ptr(), out.data_ptr(), partials, stream);
      case ReduceOp::kMean:
        return launch_mean_fwd(launch, x.dtype(), x.data_ptr(), out.data_ptr(), partials, stream);
      case ReduceOp::kAmax:
        return launch_amax_fwd(launch, x.dtype(), x.data_ptr(), out.data_ptr(), partials, stream);
    }
  }
};

class SumRowsSm90 final
    : public AxesReductionCuda<SumRowsSm90, SumFwdInterface, ReduceOp::kSum, ReducePath::kRows> {
  using AxesReductionCuda::AxesReductionCuda;
};
class SumVectorSm90 final : public AxesReductionCuda<SumVectorSm90, SumFwdInterface, ReduceOp::kSum,
                                                     ReducePath::kVector> {
  using AxesReductionCuda::AxesReductionCuda;
};
class SumGeneralSm90 final : public AxesReductionCuda<SumGeneralSm90, SumFwdInterface,
                                                      ReduceOp::kSum, ReducePath::kGeneral> {
  using AxesReductionCuda::AxesReductionCuda;
};
class MeanRowsSm90 final
    : public AxesReductionCuda<MeanRowsSm90, MeanFwdInterface, ReduceOp::kMean, ReducePath::kRows> {
  using AxesReductionCuda::AxesReductionCuda;
};
class MeanVectorSm90 final : public AxesReductionCuda<MeanVectorSm90, MeanFwdInterface,
                                                      ReduceOp::kMean, ReducePath::kVector> {
  using AxesReductionCuda::AxesReductionCuda;
};
class MeanGeneralSm90 final : public AxesReductionCuda<MeanGeneralSm90, MeanFwdInterface,
                                                       ReduceOp::kMean, ReducePath::kGeneral> {
  using AxesReductionCuda::AxesReductionCuda;
};
class AmaxRowsSm90 final
    : public AxesReductionCuda<AmaxRowsSm90, AmaxFwdInterface, ReduceOp::kAmax, ReducePath::kRows> {
  using AxesReductionCuda::AxesReductionCuda;
};
class AmaxVectorSm90 final : public AxesReductionCuda<AmaxVectorSm90, AmaxFwdInterface,
                                                      ReduceOp::kAmax, ReducePath::kVector> {
  using AxesReductionCuda::AxesReductionCuda;
};
class AmaxGeneralSm90 final : public AxesReductionCuda<AmaxGeneralSm90, AmaxFwdInterface,
                                                       ReduceOp::kAmax, ReducePath::kGeneral> {
  using AxesReductionCuda::AxesReductionCuda;
};

}  // namespace tileops::kernels::cuda
