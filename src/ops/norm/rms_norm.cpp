// RMSNormFwdOp (manifest/norm.yaml): the call spec and forward; the class is generated.
#include "kernels/norm/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {
namespace {

kernels::NormCall norm_call(const RMSNormFwdOp& op, const CallArgs& args) {
  kernels::NormCall call;
  call.device = args.device();
  call.n = op.normalized_shape().numel();
  call.eps = op.eps().value_or(kDefaultNormEps);
  call.dtype = args.input(0).dtype();
  call.has_weight = args.has(1);
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls RMSNormFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::RMSNormFwdInterface>(norm_call(*this, args))};
}

// The kernel is selected before a strided input is copied, so a call that no kernel serves
// copies nothing.
CallResult RMSNormFwdOp::forward(const CallArgs& args) {
  auto kernel = kernel_for<kernels::RMSNormFwdInterface>(norm_call(*this, args));
  const ops::ContiguousInput x(args, 0), weight(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel->forward(args.context(), *x, weight.get(), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
