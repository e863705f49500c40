// LayerNormFwdOp (manifest/norm.yaml): the call spec and forward; the class is generated.
#include "ops/norm/norm_call.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {
namespace {

kernels::NormCall norm_call(const LayerNormFwdOp& op, const CallArgs& args) {
  return ops::norm_call(args, op.normalized_shape().numel(), op.eps(), args.has(1), args.has(2));
}

}  // namespace

KernelCalls LayerNormFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::LayerNormFwdInterface>(norm_call(*this, args))};
}

CallResult LayerNormFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::LayerNormFwdInterface>(norm_call(*this, args));
  const ops::ContiguousInput x(args, 0), weight(args, 1), bias(args, 2);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, weight.get(), bias.get(), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
