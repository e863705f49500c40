// SoftmaxFwdOp (manifest/reduction.yaml): the call spec and forward; the class is generated.
#include <bit>

#include "kernels/reduction/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {
namespace {

// The axis `dim` names in a tensor of `rank` axes (the signature checked that it is valid); a
// scalar is a row of one.
std::int64_t axis_of(std::int64_t dim, std::int64_t rank) {
  return dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
}

kernels::SoftmaxCall softmax_call(const SoftmaxFwdOp& op, const CallArgs& args) {
  const Tensor& x = args.input(0);
  const auto rank = static_cast<std::int64_t>(x.dim());
  const std::int64_t axis = axis_of(op.dim(), rank);
  std::int64_t length = 1, inner = 1;
  for (std::int64_t i = 0; i < rank; ++i) {
    if (i == axis) length = x.shape()[i];
    if (i > axis) inner *= x.shape()[i];
  }
  kernels::SoftmaxCall call;
  call.device = args.device();
  call.dtype = x.dtype();
  call.axis_bucket = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(length)));
  call.innermost = inner == 1;
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls SoftmaxFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::SoftmaxFwdInterface>(softmax_call(*this, args))};
}

CallResult SoftmaxFwdOp::forward(const CallArgs& args) {
  auto kernel = kernel_for<kernels::SoftmaxFwdInterface>(softmax_call(*this, args));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  if (x->dim() == 0) {
    // The kernels take an axis of the tensor (0 <= dim < rank): a scalar is a row of one.
    Tensor out_row = out.as_strided({1}, {1}, out.byte_offset());
    kernel->forward(args.context(), x->as_strided({1}, {1}, x->byte_offset()), 0, out_row);
  } else {
    kernel->forward(args.context(), *x, axis_of(dim(), static_cast<std::int64_t>(x->dim())), out);
  }
  return ops::single_output(std::move(out));
}

}  // namespace tileops
