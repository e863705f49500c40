// The attention family's CUDA implementations (CUDA builds only): adapters from the kernel
// interfaces to the launches. AlibiFwdOp (Note [ALiBi kernel] in alibi.cuh):
//
//   alibi_vector_sm90   a 16-byte aligned out: rows in 16-byte streaming stores   preferred
//   alibi_general_sm90  anything: a misaligned out, element by element
//
// The vector path serves every sequence length (each row's unaligned head and tail are written
// element by element). As for the norm family, the general CUDA path is not declared `general`
// (the CPU reference is; Note in norm_kernels.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/runtime.hpp"
#include "kernels/attention/cuda/alibi_launch.hpp"
#include "kernels/attention/interface.hpp"
#include "kernels/common/cuda/cuda_kernel.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::kernels::cuda {

template <class Impl, bool kVector>
class AlibiCuda : public CudaKernel<Impl, AlibiFwdInterface> {
 public:
  static std::vector<std::string> preferred_over() {
    if (!kVector) return {};
    return {"alibi_general_sm90"};
  }

  static std::optional<std::string> refusal(const AlibiCall& call) {
    if (!kVector) return std::nullopt;
    return vector_access_refusal(call.access.alignment, 0);
  }

  // The grid is planned when the entry is built, on its device.
  explicit AlibiCuda(const AlibiCall& call)
      : CudaKernel<Impl, AlibiFwdInterface>(call),
        max_blocks_(plan_alibi(kVector, call.dtype, device_facts(*call.device).sm_count)) {}

  void forward(const KernelContext& ctx, Tensor& out) override {
    launch_alibi(kVector, out.dtype(), out.shape()[0], out.shape()[1], out.data_ptr(), max_blocks_,
                 tileops::cuda::native_stream(ctx.stream));
  }

 private:
  int max_blocks_;
};

// One class per implementation, so that messages and `tileops list` name it.
class AlibiVectorSm90 final : public AlibiCuda<AlibiVectorSm90, true> {
  using AlibiCuda::AlibiCuda;
};
class AlibiGeneralSm90 final : public AlibiCuda<AlibiGeneralSm90, false> {
  using AlibiCuda::AlibiCuda;
};

}  // namespace tileops::kernels::cuda
