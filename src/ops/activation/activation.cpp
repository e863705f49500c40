// SiluFwdOp, GeluFwdOp, SiluAndMulFwdOp and GeluAndMulFwdOp (manifest/activation.yaml): their call
// specs and forwards; the classes are generated.
#include "tileops/ops/activation.hpp"

#include "kernels/activation/interface.hpp"
#include "ops/op_support.hpp"

namespace tileops {
namespace {

kernels::ActivationCall activation_call(const CallArgs& args, bool tanh) {
  kernels::ActivationCall call;
  call.device = args.device();
  call.dtype = args.input(0).dtype();
  call.tanh = tanh;
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls SiluFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::SiluFwdInterface>(activation_call(args, false))};
}

CallResult SiluFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::SiluFwdInterface>(activation_call(args, false));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

KernelCalls GeluFwdOp::kernel_calls(const CallArgs& args) const {
  return {
      KernelCall::of<kernels::GeluFwdInterface>(activation_call(args, approximate() == "tanh"))};
}

CallResult GeluFwdOp::forward(const CallArgs& args) {
  auto& kernel =
      kernel_entry<kernels::GeluFwdInterface>(activation_call(args, approximate() == "tanh"));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

KernelCalls SiluAndMulFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::SiluAndMulFwdInterface>(activation_call(args, false))};
}

CallResult SiluAndMulFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::SiluAndMulFwdInterface>(activation_call(args, false));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

KernelCalls GeluAndMulFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::GeluAndMulFwdInterface>(
      activation_call(args, approximate() == "tanh"))};
}

CallResult GeluAndMulFwdOp::forward(const CallArgs& args) {
  auto& kernel =
      kernel_entry<kernels::GeluAndMulFwdInterface>(activation_call(args, approximate() == "tanh"));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
