// The elementwise family's op classes.
#include "kernels/elementwise/impls.hpp"
#include "kernels/elementwise/interface.hpp"
#include "ops/families.hpp"
#include "ops/op_class_util.hpp"
#include "ops/op_util.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops {
namespace {

kernels::BinaryCall binary_call(const CallArgs& args, const Tensor& a, const Tensor& b) {
  kernels::BinaryCall call;
  call.device = args.device();
  call.dtype = a.dtype();
  call.numel = args.call.output(0).shape.numel();
  call.broadcast = a.shape() != b.shape();
  return call;
}

}  // namespace

// ---- AddFwdOp --------------------------------------------------------------------------------

const OpClass& AddFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("AddFwdOp").interface<kernels::AddFwdInterface>("add"), kernels::add_kernel_types());
  return cls;
}

AddFwdOp::AddFwdOp(Value alpha, std::optional<Target> target)
    : AddFwdOp(ParamMap{{"alpha", std::move(alpha)}}, std::move(target)) {}

AddFwdOp::AddFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)) {}

Tensor AddFwdOp::operator()(const Tensor& a, const Tensor& b, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {a, b};
  return ops::first_output(call(inputs, options));
}

CallResult AddFwdOp::forward(const CallArgs& args) {
  auto kernel =
      kernel_for<kernels::AddFwdInterface>(binary_call(args, args.input(0), args.input(1)));
  const ops::ContiguousInput a(args, 0), b(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel->forward(*a, *b, param("alpha"), out);
  return ops::single_output(std::move(out));
}

// ---- MulFwdOp --------------------------------------------------------------------------------

const OpClass& MulFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("MulFwdOp").interface<kernels::MulFwdInterface>("mul"), kernels::mul_kernel_types());
  return cls;
}

MulFwdOp::MulFwdOp(std::optional<Target> target) : MulFwdOp(ParamMap{}, std::move(target)) {}

MulFwdOp::MulFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)) {}

Tensor MulFwdOp::operator()(const Tensor& a, const Tensor& b, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {a, b};
  return ops::first_output(call(inputs, options));
}

CallResult MulFwdOp::forward(const CallArgs& args) {
  auto kernel =
      kernel_for<kernels::MulFwdInterface>(binary_call(args, args.input(0), args.input(1)));
  const ops::ContiguousInput a(args, 0), b(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel->forward(*a, *b, out);
  return ops::single_output(std::move(out));
}

void ops::register_elementwise_ops() {
  register_op_class<AddFwdOp>();
  register_op_class<MulFwdOp>();
}

}  // namespace tileops
