// The attention family's op classes.
#include "kernels/attention/impls.hpp"
#include "kernels/attention/interface.hpp"
#include "ops/families.hpp"
#include "ops/op_class_util.hpp"
#include "ops/op_util.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops {

const OpClass& AlibiFwdOp::op_class() {
  static const OpClass cls =
      ops::with_kernel_types(OpClass("AlibiFwdOp").interface<kernels::AlibiFwdInterface>("alibi"),
                             kernels::alibi_kernel_types());
  return cls;
}

AlibiFwdOp::AlibiFwdOp(std::int64_t num_heads, std::int64_t seq_len, std::string device,
                       DType out_dtype, std::optional<Target> target)
    : AlibiFwdOp(ParamMap{{"num_heads", Value(num_heads)},
                          {"seq_len", Value(seq_len)},
                          {"out_dtype", Value(out_dtype)},
                          {"device", Value(std::move(device))}},
                 std::move(target)) {}

AlibiFwdOp::AlibiFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)) {}

Tensor AlibiFwdOp::operator()(const CallOptions& options) {
  return ops::first_output(call({}, options));
}

CallResult AlibiFwdOp::forward(const CallArgs& args) {
  kernels::AlibiCall call;
  call.device = args.device();
  call.num_heads = param("num_heads").as_int();
  call.seq_len = param("seq_len").as_int();
  call.dtype = param("out_dtype").as_dtype();
  auto kernel = kernel_for<kernels::AlibiFwdInterface>(call);
  Tensor out = allocate_output(args, 0);
  kernel->forward(out);
  return ops::single_output(std::move(out));
}

void ops::register_attention_ops() { register_op_class<AlibiFwdOp>(); }

}  // namespace tileops
