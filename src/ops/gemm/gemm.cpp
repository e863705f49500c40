// GemmFwdOp, BmmFwdOp and GroupedGemmFwdOp (manifest/gemm.yaml): their call specs and forward; the
// classes are generated. Operands reach the kernels as views where their layout allows (Note [GEMM
// operand layouts] in gemm_layout.hpp), planned before a kernel is selected so that a call no
// kernel serves copies nothing.
#include "tileops/ops/gemm.hpp"

#include <algorithm>

#include "kernels/gemm/interface.hpp"
#include "ops/gemm/gemm_layout.hpp"
#include "ops/op_support.hpp"

namespace tileops {
namespace {

using ops::OperandPlan;

// The call spec of a product with operands planned as `a` and `b`. Only the CUDA paths choose by
// shape (Note [GEMM shape classes]); a CPU call keys on dtype, layouts and bias alone, so that the
// CPU kernel keeps one entry for them.
kernels::GemmCall gemm_call(const CallArgs& args, const OperandPlan& a, const OperandPlan& b,
                            std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t batch) {
  kernels::GemmCall call;
  call.device = args.device();
  call.dtype = args.input(0).dtype();
  call.a_column_major = a.column_major;
  call.b_column_major = b.column_major;
  call.has_bias = args.has(2);
  call.access = ops::access_class(args);
  call.access.alignment = std::min({call.access.alignment, a.alignment, b.alignment});
  if (call.device && call.device->is_cpu()) return call;
  call.n = n;
  call.k = k;
  call.m_class = kernels::gemm_size_class(m);
  call.batch_class = kernels::gemm_size_class(batch);
  call.a_batch_broadcast = batch > 1 && a.batch_stride == 0;
  call.b_batch_broadcast = batch > 1 && b.batch_stride == 0;
  return call;
}

struct GemmPlan {
  OperandPlan a, b;
  kernels::GemmCall call;
};

GemmPlan plan_gemm(const CallArgs& args) {
  const Tensor& a = args.input(0);
  const Tensor& b = args.input(1);
  GemmPlan plan{ops::plan_operand(a), ops::plan_operand(b), {}};
  plan.call = gemm_call(args, plan.a, plan.b, a.shape()[0], a.shape()[1], b.shape()[1], 1);
  return plan;
}

// The broadcast batch of a bmm call: the output's leading axes.
Shape bmm_batch(const CallArgs& args) {
  const Shape& out = args.call.output(0).shape;
  Shape batch;
  for (std::size_t i = 0; i + 2 < out.size(); ++i) batch.push_back(out[i]);
  return batch;
}

// A bmm call as kernel calls: the batch split (Note [Bmm batch loops]) and the plan of the first
// call's operands, which every call shares.
struct BmmPlan {
  Shape batch;
  ops::BatchSplit split;
  GemmPlan gemm;
};

BmmPlan plan_bmm(const CallArgs& args) {
  const Tensor& a = args.input(0);
  const Tensor& b = args.input(1);
  BmmPlan plan{bmm_batch(args), {}, {}};
  plan.split = ops::split_batch(a, b, plan.batch);
  const std::size_t outer = plan.split.outer_axes;
  plan.gemm.a = ops::plan_operand(ops::outer_slice(a, plan.batch, outer, 0), plan.split.inner);
  plan.gemm.b = ops::plan_operand(ops::outer_slice(b, plan.batch, outer, 0), plan.split.inner);
  const std::size_t rank = a.dim();
  plan.gemm.call = gemm_call(args, plan.gemm.a, plan.gemm.b, a.shape()[rank - 2],
                             a.shape()[rank - 1], b.shape()[b.dim() - 1], plan.split.inner.numel());
  plan.gemm.call.access.alignment = std::min(plan.gemm.call.access.alignment, plan.split.alignment);
  return plan;
}

struct GroupedPlan {
  OperandPlan w;
  kernels::GroupedGemmCall call;
};

GroupedPlan plan_grouped(const CallArgs& args) {
  const Tensor& w = args.input(1);
  GroupedPlan plan{ops::plan_operand(w, Shape{w.shape()[0]}), {}};
  kernels::GroupedGemmCall& call = plan.call;
  call.device = args.device();
  call.dtype = w.dtype();
  call.w_column_major = plan.w.column_major;
  call.groups = w.shape()[0];
  call.k = w.shape()[1];
  call.n = w.shape()[2];
  call.access = ops::access_class(args);
  call.access.alignment = std::min(call.access.alignment, plan.w.alignment);
  return plan;
}

}  // namespace

KernelCalls GemmFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::GemmFwdInterface>(plan_gemm(args).call)};
}

CallResult GemmFwdOp::forward(const CallArgs& args) {
  const GemmPlan plan = plan_gemm(args);
  auto& kernel = kernel_entry<kernels::GemmFwdInterface>(plan.call);
  const Tensor a = ops::operand_view(args.input(0), plan.a);
  const Tensor b = ops::operand_view(args.input(1), plan.b);
  const ops::ContiguousInput bias(args, 2);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), a, b, bias.get(), out);
  return ops::single_output(std::move(out));
}

KernelCalls BmmFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::BmmFwdInterface>(plan_bmm(args).gemm.call)};
}

CallResult BmmFwdOp::forward(const CallArgs& args) {
  const BmmPlan plan = plan_bmm(args);
  auto& kernel = kernel_entry<kernels::BmmFwdInterface>(plan.gemm.call);
  Tensor out = allocate_output(args, 0);
  const Shape& s = out.shape();
  const std::int64_t m = s[s.size() - 2], n = s[s.size() - 1], inner = plan.split.inner.numel();
  const std::size_t outer = plan.split.outer_axes;
  const auto out_step = static_cast<std::int64_t>(out.itemsize()) * inner * m * n;
  for (std::int64_t call = 0; call < plan.split.calls; ++call) {
    const Tensor a = ops::operand_view(ops::outer_slice(args.input(0), plan.batch, outer, call),
                                       plan.split.inner, plan.gemm.a);
    const Tensor b = ops::operand_view(ops::outer_slice(args.input(1), plan.batch, outer, call),
                                       plan.split.inner, plan.gemm.b);
    Tensor out3 =
        out.as_strided(Shape{inner, m, n}, Shape{m * n, n, 1}, out.byte_offset() + call * out_step);
    kernel.forward(args.context(), a, b, out3);
  }
  return ops::single_output(std::move(out));
}

KernelCalls GroupedGemmFwdOp::kernel_calls(const CallArgs& args) const {
  return {KernelCall::of<kernels::GroupedGemmFwdInterface>(plan_grouped(args).call)};
}

CallResult GroupedGemmFwdOp::forward(const CallArgs& args) {
  const GroupedPlan plan = plan_grouped(args);
  auto& kernel = kernel_entry<kernels::GroupedGemmFwdInterface>(plan.call);
  const ops::ContiguousInput x(args, 0), offsets(args, 2);
  const Tensor w = ops::operand_view(args.input(1), Shape{args.input(1).shape()[0]}, plan.w);
  Tensor out = allocate_output(args, 0);
  kernel.forward(args.context(), *x, w, *offsets, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
