// RMSNormFwdOp (manifest/norm.yaml): the call spec and forward; the class is generated.
#include "ops/norm/norm_call.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {
namespace {

kernels::NormCall norm_call(const RMSNormFwdOp& op, const CallArgs& args) {
  return ops::norm_call(args, op.normalized_shape().numel(), op.eps().value_or(kDefaultNormEps),
                        args.has(1));
}

}  // namespace

KernelCalls RMSNormFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::RMSNormFwdInterface>(norm_call(*this, args))};
}

// The kernel is selected before a strided input is copied, so a call that no kernel serves
// copies nothing.
CallResult RMSNormFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::RMSNormFwdInterface>(norm_call(*this, args));
  const ops::ContiguousInput x(args, 0), weight(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, weight.get(), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
