// SoftmaxFwdOp (manifest/reduction.yaml): the call spec and forward; the class is generated.
#include "ops/op_support.hpp"
#include "ops/reduction/reduction_calls.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {

KernelCalls SoftmaxFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::SoftmaxFwdInterface>(ops::softmax_call(dim(), args))};
}

CallResult SoftmaxFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::SoftmaxFwdInterface>(ops::softmax_call(dim(), args));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  ops::run_along_axis(kernel, args, *x, dim(), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
