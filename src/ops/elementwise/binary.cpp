// AddFwdOp and MulFwdOp (manifest/elementwise.yaml): their call spec and forward; the classes are
// generated.
#include "kernels/elementwise/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops {
namespace {

kernels::BinaryCall binary_call(const CallArgs& args) {
  kernels::BinaryCall call;
  call.device = args.device();
  call.dtype = args.input(0).dtype();
  call.broadcast = args.input(0).shape() != args.input(1).shape();
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls AddFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::AddFwdInterface>(binary_call(args))};
}

CallResult AddFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::AddFwdInterface>(binary_call(args));
  const ops::ContiguousInput a(args, 0), b(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *a, *b, alpha(), out);
  return ops::single_output(std::move(out));
}

KernelCalls MulFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::MulFwdInterface>(binary_call(args))};
}

CallResult MulFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::MulFwdInterface>(binary_call(args));
  const ops::ContiguousInput a(args, 0), b(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *a, *b, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
