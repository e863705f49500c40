// The elementwise family's CUDA implementations (CUDA builds only): adapters from the kernel
// interfaces to the launches of binary_launch.hpp, one class per (op, path). Note [Binary
// kernels] in binary.cuh describes the paths; per op:
//
//   <op>_vector_sm90     same shapes, contiguous, 16-byte aligned        preferred over the 2 below
//   <op>_broadcast_sm90  broadcasts and views with unit-stride rows, rows and pointers 16-byte
//                        aligned (Note [Binary layout])                 preferred over general
//   <op>_general_sm90    anything of at most kMaxBinaryAxes merged axes: strided views,
//                        misaligned pointers, odd row lengths
//
// As in the norm family (norm_kernels.hpp), the general path is not declared `general`: the CPU
// reference is the interface's one general implementation. The launch is planned when the entry is
// built, on its device.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/elementwise/binary_layout.hpp"
#include "kernels/elementwise/cuda/binary_launch.hpp"
#include "kernels/elementwise/interface.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

constexpr std::string_view binary_path_name(BinaryPath path) {
  switch (path) {
    case BinaryPath::kVector:
      return "vector";
    case BinaryPath::kRows:
      return "broadcast";
    case BinaryPath::kGeneral:
      return "general";
  }
  return "";
}

// What the implementations of one path share: refusal, precedence, the plan built with the entry
// and the launch. `Impl::kOpName` names the op in the keys: "<op>_<path>_sm90".
template <class Impl, class I, BinaryOp kOp, BinaryPath kPath>
class BinaryCudaKernel : public CudaKernel<Impl, I> {
 public:
  static std::vector<std::string> preferred_over() {
    std::vector<std::string> keys;
    for (BinaryPath later : {BinaryPath::kRows, BinaryPath::kGeneral})
      if (later > kPath)
        keys.push_back(fmt::format("{}_{}_sm90", Impl::kOpName, binary_path_name(later)));
    return keys;
  }

  static std::optional<std::string> refusal(const BinaryCall& call) {
    if (kPath == BinaryPath::kVector) {
      if (call.broadcast) return std::string("the inputs broadcast; this path needs equal shapes");
      if (call.strided)
        return std::string("an input is a non-contiguous view; this path reads contiguous inputs");
    }
    if (call.axes > kMaxBinaryAxes)
      return fmt::format(
          "{} axes remain after merging the broadcast; the kernels decode at most {}", call.axes,
          kMaxBinaryAxes);
    if (kPath == BinaryPath::kGeneral) return std::nullopt;
    if (auto reason = vector_access_refusal(call.access.alignment, 0)) return reason;
    if (kPath == BinaryPath::kRows) {
      if (call.row_alignment == 0)
        return std::string(
            "an input steps through its rows with a stride other than 1; this path reads rows as "
            "16-byte vectors");
      if (call.row_alignment < 16)
        return fmt::format(
            "reads 16-byte vectors and the rows of the merged layout are aligned to {} bytes",
            call.row_alignment);
    }
    return std::nullopt;
  }

  explicit BinaryCudaKernel(const BinaryCall& call)
      : CudaKernel<Impl, I>(call), launch_(plan_binary(kOp, kPath, call.dtype)) {}

 protected:
  void launch(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Value* alpha,
              Tensor& out) const {
    const bool floating = is_floating(out.dtype());
    const double alpha_float = alpha ? alpha->as_float() : 1.0;
    const std::int64_t alpha_int = alpha && !floating ? alpha->as_int() : 1;
    launch_binary(launch_, a, b, alpha_float, alpha_int, out,
                  tileops::cuda::native_stream(ctx.stream));
  }

 private:
  BinaryLaunch launch_;
};

template <class Impl, BinaryPath kPath>
class AddCuda : public BinaryCudaKernel<Impl, AddFwdInterface, BinaryOp::kAdd, kPath> {
 public:
  static constexpr std::string_view kOpName = "add";
  using BinaryCudaKernel<Impl, AddFwdInterface, BinaryOp::kAdd, kPath>::BinaryCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Value& alpha,
               Tensor& out) override {
    this->launch(ctx, a, b, &alpha, out);
  }
};

template <class Impl, BinaryPath kPath>
class MulCuda : public BinaryCudaKernel<Impl, MulFwdInterface, BinaryOp::kMul, kPath> {
 public:
  static constexpr std::string_view kOpName = "mul";
  using BinaryCudaKernel<Impl, MulFwdInterface, BinaryOp::kMul, kPath>::BinaryCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) override {
    this->launch(ctx, a, b, nullptr, out);
  }
};

// One class per implementation, so that messages and `tileops list` name it.
class AddVectorSm90 final : public AddCuda<AddVectorSm90, BinaryPath::kVector> {
  using AddCuda::AddCuda;
};
class AddBroadcastSm90 final : public AddCuda<AddBroadcastSm90, BinaryPath::kRows> {
  using AddCuda::AddCuda;
};
class AddGeneralSm90 final : public AddCuda<AddGeneralSm90, BinaryPath::kGeneral> {
  using AddCuda::AddCuda;
};
class MulVectorSm90 final : public MulCuda<MulVectorSm90, BinaryPath::kVector> {
  using MulCuda::MulCuda;
};
class MulBroadcastSm90 final : public MulCuda<MulBroadcastSm90, BinaryPath::kRows> {
  using MulCuda::MulCuda;
};
class MulGeneralSm90 final : public MulCuda<MulGeneralSm90, BinaryPath::kGeneral> {
  using MulCuda::MulCuda;
};

}  // namespace tileops::kernels::cuda
