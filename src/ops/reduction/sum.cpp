// SumFwdOp (manifest/reduction.yaml): the call spec and forward; the class is generated.
#include "kernels/reduction/interface.hpp"
#include "ops/op_support.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops {
namespace {

// Which axes of a rank-`rank` input `dim` reduces: None or [] reduces every axis
// (reduced(..., 'full')); the signature checked the axes. A scalar has no axis to mark: as in
// PyTorch, dim 0 or -1 names the scalar itself, whose sum is its value.
std::vector<bool> reduced_axes(const std::optional<Shape>& dim, std::size_t rank) {
  std::vector<bool> reduced(rank, !dim || dim->empty());
  if (dim && rank > 0)
    for (std::int64_t a : *dim)
      reduced[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(rank) : a)] = true;
  return reduced;
}

kernels::SumCall sum_call(const std::vector<bool>& reduced, const CallArgs& args) {
  kernels::SumCall call;
  call.device = args.device();
  call.dtype = args.input(0).dtype();
  call.rank = static_cast<int>(reduced.size());
  for (std::size_t i = 0; i < reduced.size(); ++i)
    if (reduced[i]) call.reduced_mask |= std::uint64_t{1} << i;
  call.access = ops::access_class(args);
  return call;
}

}  // namespace

KernelCalls SumFwdOp::kernel_calls(const CallArgs& args) const {
  const std::vector<bool> reduced = reduced_axes(dim(), args.input(0).dim());
  return {KernelCall::of<kernels::SumFwdInterface>(sum_call(reduced, args))};
}

CallResult SumFwdOp::forward(const CallArgs& args) {
  const std::vector<bool> reduced = reduced_axes(dim(), args.input(0).dim());
  auto kernel = kernel_for<kernels::SumFwdInterface>(sum_call(reduced, args));
  const ops::ContiguousInput x(args, 0);
  Tensor out = allocate_output(args, 0);
  kernel->forward(args.context(), *x, reduced, out);
  return ops::single_output(std::move(out));
}

}  // namespace tileops
