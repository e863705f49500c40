// RopeFwdOp (manifest/rope.yaml): the call spec and forward; the class is generated.
#include "tileops/ops/rope.hpp"

#include "kernels/rope/interface.hpp"
#include "ops/op_support.hpp"

namespace tileops {
namespace {

// Inputs in signature order: positions, query, key, cos_sin_cache.
kernels::RopeCall rope_call(const RopeFwdOp& op, const CallArgs& args) {
  kernels::RopeCall call;
  call.device = args.device();
  call.dtype = args.input(1).dtype();
  call.index_dtype = args.input(0).dtype();
  call.is_neox = op.is_neox();
  call.rotary_dim = args.input(3).shape()[1];
  call.head_size = args.input(1).shape()[2];
  call.access = ops::access_class(args);
  return call;
}

// Columns [0, R) of every head of t [N, H, D]: the part of a written input the op changes.
Tensor rotated_columns(const Tensor& t, std::int64_t rotary_dim) {
  return t.as_strided(Shape{t.shape()[0], t.shape()[1], rotary_dim}, t.strides(), t.byte_offset());
}

}  // namespace

KernelCalls RopeFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::RopeFwdInterface>(rope_call(*this, args))};
}

CallResult RopeFwdOp::forward(const CallArgs& args) {
  const kernels::RopeCall call = rope_call(*this, args);
  auto& kernel = kernel_entry<kernels::RopeFwdInterface>(call);
  const ops::ContiguousInput positions(args, 0), cache(args, 3);
  // Query and key are rotated in place, so a strided one is rotated in a contiguous copy whose
  // rotated columns are copied back (columns R..D-1 of the caller's tensor are never written).
  // ContiguousInput hands the caller's tensor itself when it is contiguous (no copy of the handle).
  const Tensor& query = args.input(1);
  const Tensor& key = args.input(2);
  const ops::ContiguousInput q(args, 1), k(args, 2);
  kernel.forward(args.context(), *positions, *q, *k, *cache);
  if (!query.is_contiguous())
    rotated_columns(query, call.rotary_dim).copy_from(rotated_columns(*q, call.rotary_dim));
  if (!key.is_contiguous())
    rotated_columns(key, call.rotary_dim).copy_from(rotated_columns(*k, call.rotary_dim));
  return {};
}

}  // namespace tileops
