// The norm family's op classes: their construction, forward and registration.
#include "kernels/norm/cpu/norm_cpu.hpp"
#include "kernels/norm/impls.hpp"
#include "kernels/norm/interface.hpp"
#include "ops/families.hpp"
#include "ops/op_class_util.hpp"
#include "ops/op_util.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {

using kernels::NormCall;

namespace {

// eps = None means float32's machine epsilon (docs/manifest.md: torch computes in float32).
double resolve_eps(const Value& eps) {
  return eps.is_none() ? kernels::cpu::kDefaultRmsNormEps : eps.as_float();
}

std::int64_t row_length(const Value& normalized_shape) {
  return normalized_shape.as_int_list().numel();
}

}  // namespace

// ---- RMSNormFwdOp ----------------------------------------------------------------------------

const OpClass& RMSNormFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("RMSNormFwdOp").interface<kernels::RMSNormFwdInterface>("rms_norm"),
      kernels::rms_norm_kernel_types());
  return cls;
}

RMSNormFwdOp::RMSNormFwdOp(Shape normalized_shape, std::optional<double> eps,
                           std::optional<Target> target)
    : RMSNormFwdOp(ParamMap{{"normalized_shape", Value(std::move(normalized_shape))},
                            {"eps", ops::optional_float(eps)}},
                   std::move(target)) {}

RMSNormFwdOp::RMSNormFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)),
      row_length_(row_length(param("normalized_shape"))),
      eps_(resolve_eps(param("eps"))) {}

Tensor RMSNormFwdOp::operator()(const Tensor& x, const std::optional<Tensor>& weight,
                                const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x, weight};
  return ops::first_output(call(inputs, options));
}

// Each forward selects its kernel before it copies a strided input, so a call that no kernel runs
// (a CUDA call here) fails on availability and copies nothing.
CallResult RMSNormFwdOp::forward(const CallArgs& args) {
  NormCall call;
  call.device = args.device();
  call.n = row_length_;
  call.eps = eps_;
  call.dtype = args.input(0).dtype();
  call.has_weight = args.has(1);
  auto kernel = kernel_for<kernels::RMSNormFwdInterface>(call);
  const ops::ContiguousInput x(args, 0), weight(args, 1);
  Tensor out = allocate_output(args, 0);
  kernel->forward(*x, weight.get(), out);
  return ops::single_output(std::move(out));
}

// ---- LayerNormFwdOp --------------------------------------------------------------------------

const OpClass& LayerNormFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("LayerNormFwdOp").interface<kernels::LayerNormFwdInterface>("layer_norm"),
      kernels::layer_norm_kernel_types());
  return cls;
}

LayerNormFwdOp::LayerNormFwdOp(Shape normalized_shape, double eps, std::optional<Target> target)
    : LayerNormFwdOp(
          ParamMap{{"normalized_shape", Value(std::move(normalized_shape))}, {"eps", Value(eps)}},
          std::move(target)) {}

LayerNormFwdOp::LayerNormFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)),
      row_length_(row_length(param("normalized_shape"))),
      eps_(param("eps").as_float()) {}

Tensor LayerNormFwdOp::operator()(const Tensor& x, const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x, weight, bias};
  return ops::first_output(call(inputs, options));
}

CallResult LayerNormFwdOp::forward(const CallArgs& args) {
  NormCall call;
  call.device = args.device();
  call.n = row_length_;
  call.eps = eps_;
  call.dtype = args.input(0).dtype();
  call.has_weight = args.has(1);
  call.has_bias = args.has(2);
  auto kernel = kernel_for<kernels::LayerNormFwdInterface>(call);
  const ops::ContiguousInput x(args, 0), weight(args, 1), bias(args, 2);
  Tensor out = allocate_output(args, 0);
  kernel->forward(*x, weight.get(), bias.get(), out);
  return ops::single_output(std::move(out));
}

// ---- FusedAddRMSNormFwdOp --------------------------------------------------------------------

const OpClass& FusedAddRMSNormFwdOp::op_class() {
  static const OpClass cls = ops::with_kernel_types(
      OpClass("FusedAddRMSNormFwdOp")
          .interface<kernels::FusedAddRMSNormFwdInterface>("fused_add_rms_norm"),
      kernels::fused_add_rms_norm_kernel_types());
  return cls;
}

FusedAddRMSNormFwdOp::FusedAddRMSNormFwdOp(std::optional<double> eps, std::optional<Target> target)
    : FusedAddRMSNormFwdOp(ParamMap{{"eps", ops::optional_float(eps)}}, std::move(target)) {}

FusedAddRMSNormFwdOp::FusedAddRMSNormFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)), eps_(resolve_eps(param("eps"))) {}

Tensor FusedAddRMSNormFwdOp::operator()(const Tensor& x, const Tensor& residual,
                                        const Tensor& weight, const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x, residual, weight};
  return ops::first_output(call(inputs, options));
}

CallResult FusedAddRMSNormFwdOp::forward(const CallArgs& args) {
  const Tensor& input = args.input(0);
  NormCall call;
  call.device = args.device();
  call.n = input.dim() == 0 ? 1 : input.shape().back();
  call.eps = eps_;
  call.dtype = input.dtype();
  call.has_weight = true;
  auto kernel = kernel_for<kernels::FusedAddRMSNormFwdInterface>(call);
  const ops::ContiguousInput x(args, 0), weight(args, 2);
  // The residual is written in place, so a strided one is updated through a contiguous copy.
  Tensor residual = args.input(1);
  Tensor work = residual.is_contiguous() ? residual : residual.contiguous();
  Tensor out = allocate_output(args, 0);
  kernel->forward(*x, work, *weight, out);
  if (!residual.is_contiguous()) residual.copy_from(work);
  return ops::single_output(std::move(out));
}

void ops::register_norm_ops() {
  register_op_class<RMSNormFwdOp>();
  register_op_class<LayerNormFwdOp>();
  register_op_class<FusedAddRMSNormFwdOp>();
  register_op_class<ResidualRMSNormFwdOp>();
}

}  // namespace tileops
