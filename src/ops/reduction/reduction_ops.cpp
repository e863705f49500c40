// The reduction family's op classes.
#include "kernels/reduction/impls.hpp"
#include "kernels/reduction/interface.hpp"
#include "ops/families.hpp"
#include "ops/op_class_util.hpp"
#include "ops/op_util.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {

// ---- SoftmaxFwdOp ----------------------------------------------------------------------------

const OpClass& SoftmaxFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("SoftmaxFwdOp").interface<kernels::SoftmaxFwdInterface>("softmax"),
      kernels::softmax_kernel_types());
  return cls;
}

SoftmaxFwdOp::SoftmaxFwdOp(std::int64_t dim, std::optional<Target> target)
    : SoftmaxFwdOp(ParamMap{{"dim", Value(dim)}}, std::move(target)) {}

SoftmaxFwdOp::SoftmaxFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)) {}

Tensor SoftmaxFwdOp::operator()(const Tensor& x, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x};
  return ops::first_output(call(inputs, options));
}

CallResult SoftmaxFwdOp::forward(const CallArgs& args) {
  const Tensor& input = args.input(0);
  const auto rank = static_cast<std::int64_t>(input.dim());
  std::int64_t dim = param("dim").as_int();
  if (dim < 0) dim += rank == 0 ? 1 : rank;  // the signature checked the axis is valid
  kernels::SoftmaxCall call;
  call.device = args.device();
  call.dtype = input.dtype();
  call.outer = 1;
  call.axis = rank == 0 ? 1 : input.shape()[dim];
  call.inner = 1;
  for (std::int64_t i = 0; i < rank; ++i) {
    if (i < dim) call.outer *= input.shape()[i];
    if (i > dim) call.inner *= input.shape()[i];
  }
  // Selected before the input is copied, so a call no kernel runs copies nothing.
  auto kernel = kernel_for<kernels::SoftmaxFwdInterface>(call);
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  if (rank == 0) {
    // The kernels take an axis of the tensor (0 <= dim < rank): a scalar is a row of one.
    Tensor out_row = out.as_strided({1}, {1}, out.byte_offset());
    kernel->forward(x->as_strided({1}, {1}, x->byte_offset()), 0, out_row);
  } else {
    kernel->forward(*x, dim, out);
  }
  return ops::single_output(std::move(out));
}

// ---- SumFwdOp --------------------------------------------------------------------------------

const OpClass& SumFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("SumFwdOp").interface<kernels::SumFwdInterface>("sum"), kernels::sum_kernel_types());
  return cls;
}

SumFwdOp::SumFwdOp(std::optional<Shape> dim, bool keepdim, std::optional<Target> target)
    : SumFwdOp(
          ParamMap{{"dim", dim ? Value(std::move(*dim)) : Value()}, {"keepdim", Value(keepdim)}},
          std::move(target)) {}

SumFwdOp::SumFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)) {}

Tensor SumFwdOp::operator()(const Tensor& x, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x};
  return ops::first_output(call(inputs, options));
}

CallResult SumFwdOp::forward(const CallArgs& args) {
  const Tensor& x = args.input(0);
  const auto rank = static_cast<std::int64_t>(x.dim());
  // dim None or empty reduces every axis (reduced(..., 'full')); the signature checked the axes.
  std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
  const Value& dim = param("dim");
  if (dim.is_none() || dim.as_int_list().empty()) {
    reduced.assign(reduced.size(), true);
  } else {
    for (std::int64_t a : dim.as_int_list())
      reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
  }
  kernels::SumCall call;
  call.device = args.device();
  call.dtype = x.dtype();
  call.numel = x.numel();
  call.rank = static_cast<int>(rank);
  for (std::int64_t i = 0; i < rank; ++i)
    if (reduced[static_cast<std::size_t>(i)]) call.reduced_mask |= std::uint64_t{1} << i;
  auto kernel = kernel_for<kernels::SumFwdInterface>(call);
  const ops::ContiguousInput contiguous_x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel->forward(*contiguous_x, reduced, out);
  return ops::single_output(std::move(out));
}

void ops::register_reduction_ops() {
  register_op_class<SoftmaxFwdOp>();
  register_op_class<SumFwdOp>();
}

}  // namespace tileops
