// AddFwdOp and MulFwdOp (manifest/elementwise.yaml): their call spec and forward; the classes are
// generated. Inputs reach the kernels as the caller's views, never copied: the CUDA paths read
// strided and broadcast inputs in place (Note [Binary layout] in
// kernels/elementwise/binary_layout.hpp) and the CPU reference makes its own contiguous copies.
#include <cstdint>

#include "kernels/elementwise/binary_layout.hpp"
#include "kernels/elementwise/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops {
namespace {

// ops::access_class counts a view as the aligned copy ContiguousInput would make of it; these
// views are read in place, so their own addresses count.
AccessClass view_access_class(const CallArgs& args) {
  AccessClass access = ops::access_class(args);
  std::uintptr_t addresses = access.alignment;
  for (std::size_t i = 0; i < 2; ++i) {
    const Tensor& t = args.input(i);
    if (!t.is_contiguous() && !t.is_meta() && t.numel() > 0)
      addresses |= reinterpret_cast<std::uintptr_t>(t.data_ptr());
  }
  access.alignment = static_cast<std::uint8_t>(addresses & (~addresses + 1));
  return access;
}

kernels::BinaryCall binary_call(const CallArgs& args) {
  const Tensor& a = args.input(0);
  const Tensor& b = args.input(1);
  kernels::BinaryCall call;
  call.device = args.device();
  call.dtype = a.dtype();
  call.broadcast = a.shape() != b.shape();
  call.strided = !a.is_contiguous() || !b.is_contiguous();
  call.access = view_access_class(args);
  // Only the CUDA paths select on the layout; a CPU call leaves its fields at their defaults, so
  // that the CPU reference keeps one entry per dtype and broadcast.
  if (call.device && call.device->is_cpu()) return call;
  kernels::BinaryLayout layout;
  if (kernels::binary_layout(a, b, args.call.output(0).shape, layout)) {
    call.axes = layout.outer_rank + 1;
    call.row_alignment = kernels::binary_row_alignment(layout, a.itemsize());
  } else {
    call.axes = kernels::kMaxBinaryAxes + 1;
    call.row_alignment = 0;
  }
  return call;
}

}  // namespace

KernelCalls AddFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::AddFwdInterface>(binary_call(args))};
}

CallResult AddFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::AddFwdInterface>(binary_call(args));
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), args.input(0), args.input(1), alpha(), out);
  return ops::single_output(std::move(out));
}

KernelCalls MulFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::MulFwdInterface>(binary_call(args))};
}

CallResult MulFwdOp::forward(const CallArgs& args) {
  auto& kernel = kernel_entry<kernels::MulFwdInterface>(binary_call(args));
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), args.input(0), args.input(1), out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
