// FusedAddRMSNormFwdOp (manifest/norm.yaml): the call spec and forward; the class is generated.
#include "ops/norm/norm_call.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {
namespace {

// Rows of the last axis (a scalar is a row of one); the weight is required.
kernels::NormCall norm_call(const FusedAddRMSNormFwdOp& op, const CallArgs& args) {
  const Tensor& x = args.input(0);
  return ops::norm_call(args, x.dim() == 0 ? 1 : x.shape().back(),
                        op.eps().value_or(kDefaultNormEps), true);
}

}  // namespace

KernelCalls FusedAddRMSNormFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::FusedAddRMSNormFwdInterface>(norm_call(*this, args))};
}

CallResult FusedAddRMSNormFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::FusedAddRMSNormFwdInterface>(norm_call(*this, args));
  const ops::ContiguousInput x(args, 0), weight(args, 2);
  // The residual is written in place, so a strided one is updated through a contiguous copy.
  Tensor residual = args.input(1);
  Tensor work = residual.is_contiguous() ? residual : residual.contiguous();
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, work, *weight, out);
  if (!residual.is_contiguous()) residual.copy_from(work);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
