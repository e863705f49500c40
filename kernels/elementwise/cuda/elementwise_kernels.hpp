// The elementwise family's CUDA implementations (CUDA builds only): a simple add and mul, enough
// for the composites that use them (ResidualRMSNormFwdOp's add stage); the tuned elementwise
// family is later work. Per op:
//
//   <op>_vector_sm90     same-shape inputs, 16-byte aligned pointers: 16-byte vectors; preferred
//   <op>_broadcast_sm90  anything: broadcasting, misaligned pointers
//
// (the CPU reference is the interface's one `general` implementation; Note in norm_kernels.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/elementwise/cuda/binary_launch.hpp"
#include "kernels/elementwise/interface.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

template <class Impl, class I, bool kVector>
class BinaryCudaKernel : public CudaKernel<Impl, I> {
 public:
  static std::vector<std::string> preferred_over() {
    if (!kVector) return {};
    return {std::string(Impl::kOpName) + "_broadcast_sm90"};
  }

  static std::optional<std::string> refusal(const BinaryCall& call) {
    if (!kVector) return std::nullopt;
    if (call.broadcast) return std::string("the inputs broadcast; this path needs equal shapes");
    return vector_access_refusal(call.access.alignment, 0);
  }

  explicit BinaryCudaKernel(const BinaryCall& call)
      : CudaKernel<Impl, I>(call), sm_count_(device_facts(*call.device).sm_count) {}

 protected:
  void launch(const KernelContext& ctx, BinaryOp op, const Tensor& a, const Tensor& b,
              const Value* alpha, Tensor& out) const {
    const bool floating = is_floating(out.dtype());
    const double alpha_float = alpha ? alpha->as_float() : 1.0;
    const std::int64_t alpha_int = alpha && !floating ? alpha->as_int() : 1;
    launch_binary(op, kVector, a, b, alpha_float, alpha_int, out, sm_count_,
                  tileops::cuda::native_stream(ctx.stream));
  }

 private:
  int sm_count_;
};

template <class Impl, bool kVector>
class AddCuda : public BinaryCudaKernel<Impl, AddFwdInterface, kVector> {
 public:
  static constexpr std::string_view kOpName = "add";
  using BinaryCudaKernel<Impl, AddFwdInterface, kVector>::BinaryCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Value& alpha,
               Tensor& out) override {
    this->launch(ctx, BinaryOp::kAdd, a, b, &alpha, out);
  }
};

template <class Impl, bool kVector>
class MulCuda : public BinaryCudaKernel<Impl, MulFwdInterface, kVector> {
 public:
  static constexpr std::string_view kOpName = "mul";
  using BinaryCudaKernel<Impl, MulFwdInterface, kVector>::BinaryCudaKernel;
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) override {
    this->launch(ctx, BinaryOp::kMul, a, b, nullptr, out);
  }
};

class AddVectorSm90 final : public AddCuda<AddVectorSm90, true> {
  using AddCuda::AddCuda;
};
class AddBroadcastSm90 final : public AddCuda<AddBroadcastSm90, false> {
  using AddCuda::AddCuda;
};
class MulVectorSm90 final : public MulCuda<MulVectorSm90, true> {
  using MulCuda::MulCuda;
};
class MulBroadcastSm90 final : public MulCuda<MulBroadcastSm90, false> {
  using MulCuda::MulCuda;
};

}  // namespace tileops::kernels::cuda
