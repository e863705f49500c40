// The activation family's CUDA implementations (CUDA builds only): adapters from the kernel
// interfaces to the launches of activation_launch.hpp, one class per (op, path). Note [Activation
// kernels] in activation.cuh describes the paths; per op:
//
//   <op>_vector_sm90   16-byte aligned pointers (and, gated, N's bytes a multiple of 16): 16-byte
//                      vectors; preferred over general
//   <op>_general_sm90  anything: misaligned pointers, odd N
//
// As in the norm family (norm_kernels.hpp), the general path is not declared `general`: the CPU
// reference is the interface's one general implementation. The launch is planned when the entry is
// built, on its device. GELU's form is the call's (`tanh`), so one entry serves one form.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/activation/cuda/activation_launch.hpp"
#include "kernels/activation/interface.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

// What the implementations share: refusal, precedence, the plan built with the entry and the
// launch. `Impl::kOpName` names the op in the keys: "<op>_vector_sm90", "<op>_general_sm90";
// `kSilu` picks SiLU, else GELU in the call's form.
template <class Impl, class I, bool kGated, bool kSilu, bool kVector>
class ActivationCudaKernel : public CudaKernel<Impl, I> {
 public:
  static std::vector<std::string> preferred_over() {
    if (!kVector) return {};
    return {fmt::format("{}_general_sm90", Impl::kOpName)};
  }

  static std::optional<std::string> refusal(const ActivationCall& call) {
    if (!kVector) return std::nullopt;
    if (auto reason = vector_access_refusal(call.access.alignment, 0)) return reason;
    if (kGated && call.row_alignment < 16)
      return fmt::format(
          "reads 16-byte vectors and the halves of a row (N elements each) are aligned to {} bytes",
          call.row_alignment);
    return std::nullopt;
  }

  explicit ActivationCudaKernel(const ActivationCall& call)
      : CudaKernel<Impl, I>(call),
        launch_(plan_activation(kind(call), kGated, kVector, call.dtype,
                                device_facts(*call.device).sm_count)) {}

  void forward(const KernelContext& ctx, const Tensor& x, Tensor& out) override {
    launch_activation(launch_, x, out, tileops::cuda::native_stream(ctx.stream));
  }

 private:
  static ActivationKind kind(const ActivationCall& call) {
    if (kSilu) return ActivationKind::kSilu;
    return call.tanh ? ActivationKind::kGeluTanh : ActivationKind::kGeluErf;
  }

  ActivationLaunch launch_;
};

template <class Impl, bool kVector>
class SiluCuda : public ActivationCudaKernel<Impl, SiluFwdInterface, false, true, kVector> {
 public:
  static constexpr std::string_view kOpName = "silu";
  using ActivationCudaKernel<Impl, SiluFwdInterface, false, true, kVector>::ActivationCudaKernel;
};
template <class Impl, bool kVector>
class GeluCuda : public ActivationCudaKernel<Impl, GeluFwdInterface, false, false, kVector> {
 public:
  static constexpr std::string_view kOpName = "gelu";
  using ActivationCudaKernel<Impl, GeluFwdInterface, false, false, kVector>::ActivationCudaKernel;
};
template <class Impl, bool kVector>
class SiluAndMulCuda
    : public ActivationCudaKernel<Impl, SiluAndMulFwdInterface, true, true, kVector> {
 public:
  static constexpr std::string_view kOpName = "silu_and_mul";
  using ActivationCudaKernel<Impl, SiluAndMulFwdInterface, true, true,
                             kVector>::ActivationCudaKernel;
};
template <class Impl, bool kVector>
class GeluAndMulCuda
    : public ActivationCudaKernel<Impl, GeluAndMulFwdInterface, true, false, kVector> {
 public:
  static constexpr std::string_view kOpName = "gelu_and_mul";
  using ActivationCudaKernel<Impl, GeluAndMulFwdInterface, true, false,
                             kVector>::ActivationCudaKernel;
};

// One class per implementation, so that messages and `tileops list` name it.
class SiluVectorSm90 final : public SiluCuda<SiluVectorSm90, true> {
  using SiluCuda::SiluCuda;
};
class SiluGeneralSm90 final : public SiluCuda<SiluGeneralSm90, false> {
  using SiluCuda::SiluCuda;
};
class GeluVectorSm90 final : public GeluCuda<GeluVectorSm90, true> {
  using GeluCuda::GeluCuda;
};
class GeluGeneralSm90 final : public GeluCuda<GeluGeneralSm90, false> {
  using GeluCuda::GeluCuda;
};
class SiluAndMulVectorSm90 final : public SiluAndMulCuda<SiluAndMulVectorSm90, true> {
  using SiluAndMulCuda::SiluAndMulCuda;
};
class SiluAndMulGeneralSm90 final : public SiluAndMulCuda<SiluAndMulGeneralSm90, false> {
  using SiluAndMulCuda::SiluAndMulCuda;
};
class GeluAndMulVectorSm90 final : public GeluAndMulCuda<GeluAndMulVectorSm90, true> {
  using GeluAndMulCuda::GeluAndMulCuda;
};
class GeluAndMulGeneralSm90 final : public GeluAndMulCuda<GeluAndMulGeneralSm90, false> {
  using GeluAndMulCuda::GeluAndMulCuda;
};

}  // namespace tileops::kernels::cuda
