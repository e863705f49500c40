// AlibiFwdOp (manifest/attention.yaml): the call spec and forward; the class is generated.
#include "kernels/attention/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops {
namespace {

kernels::AlibiCall alibi_call(const AlibiFwdOp& op, const CallArgs& args) {
  kernels::AlibiCall call;
  call.device = args.device();
  call.dtype = op.out_dtype();
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls AlibiFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::AlibiFwdInterface>(alibi_call(*this, args))};
}

CallResult AlibiFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::AlibiFwdInterface>(alibi_call(*this, args));
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
