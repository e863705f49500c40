// SumFwdOp (manifest/reduction.yaml): the call spec and forward; the class is generated.
#include "ops/op_support.hpp"
#include "ops/reduction/reduction_calls.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {

KernelCalls SumFwdOp::kernel_calls(const CallArgs& args) const {
  const std::vector<bool> reduced = ops::reduced_axes(dim(), args.input(0).dim());
  return {KernelCall::of<kernels::SumFwdInterface>(ops::reduction_call(reduced, args))};
}

CallResult SumFwdOp::forward(const CallArgs& args) {
  const std::vector<bool> reduced = ops::reduced_axes(dim(), args.input(0).dim());
  auto& kernel = kernel_entry<kernels::SumFwdInterface>(ops::reduction_call(reduced, args));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, reduced, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
