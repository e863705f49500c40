// The gemm family's cuBLASLt implementations (CUDA builds only): GemmFwdOp and BmmFwdOp through
// one LtMatmul per call spec (lt_matmul.hpp; docs/gemm.md, cuBLASLt). They are not declared
// `general`: an interface has one general implementation, the CPU one, and these are the only
// implementations on a CUDA device, so nothing needs to rank below them.
#pragma once

#include <optional>
#include <string>

#include "kernels/common/cuda/cuda_kernel.hpp"
#include "kernels/gemm/cuda/lt_matmul.hpp"
#include "kernels/gemm/interface.hpp"

namespace tileops::kernels::cuda {

template <class Impl, class I>
class CublasLtKernel : public CudaKernel<Impl, I> {
 public:
  static std::optional<std::string> refusal(const GemmCall& call) {
    return LtMatmul::refusal(call);
  }

  CublasLtKernel(const GemmCall& call, std::string key)
      : CudaKernel<Impl, I>(call), matmul_(call, std::move(key)) {}

  std::string detail() const override { return matmul_.detail(); }

 protected:
  LtMatmul matmul_;
};

class GemmCublasLtSm90 final : public CublasLtKernel<GemmCublasLtSm90, GemmFwdInterface> {
 public:
  explicit GemmCublasLtSm90(const GemmCall& call) : CublasLtKernel(call, "gemm_cublaslt_sm90") {}
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* bias,
               Tensor& out) override;
};

class BmmCublasLtSm90 final : public CublasLtKernel<BmmCublasLtSm90, BmmFwdInterface> {
 public:
  explicit BmmCublasLtSm90(const GemmCall& call) : CublasLtKernel(call, "bmm_cublaslt_sm90") {}
  void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) override;
};

}  // namespace tileops::kernels::cuda
