// SiluFwdOp, GeluFwdOp, SiluAndMulFwdOp and GeluAndMulFwdOp (manifest/activation.yaml): their call
// specs and forwards; the classes are generated.
#include "tileops/ops/activation.hpp"

#include <cstdint>

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

// A gated op's call: its rows' halves start N elements apart. Only the CUDA paths select on that;
// a CPU call keeps the default, so that the CPU reference keeps one entry per dtype.
kernels::ActivationCall gated_call(const CallArgs& args, bool tanh) {
  kernels::ActivationCall call = activation_call(args, tanh);
  if (call.device && call.device->is_cpu()) return call;
  const Shape& out = args.call.output(0).shape;
  const auto half_bytes = static_cast<std::uint64_t>(out[out.size() - 1]) *
                          static_cast<std::uint64_t>(dtype_size(call.dtype));
  const std::uint64_t lowest = half_bytes & (~half_bytes + 1);
  call.row_alignment = lowest == 0 || lowest > 16 ? 16 : static_cast<int>(lowest);
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
  return {KernelCall::of<kernels::SiluAndMulFwdInterface>(gated_call(args, false))};
}

CallResult SiluAndMulFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::SiluAndMulFwdInterface>(gated_call(args, false));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

KernelCalls GeluAndMulFwdOp::kernel_calls(const CallArgs& args) const {
  return {
      KernelCall::of<kernels::GeluAndMulFwdInterface>(gated_call(args, approximate() == "tanh"))};
}

CallResult GeluAndMulFwdOp::forward(const CallArgs& args) {
  auto& kernel =
      kernel_entry<kernels::GeluAndMulFwdInterface>(gated_call(args, approximate() == "tanh"));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
