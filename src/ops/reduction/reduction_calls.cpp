#include "ops/reduction/reduction_calls.hpp"

#include <bit>

#include "ops/op_support.hpp"

namespace tileops::ops {
namespace {

// The axis `dim` names in a tensor of `rank` axes; a scalar is a row of one.
std::int64_t axis_of(std::int64_t dim, std::int64_t rank) {
  return dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
}

}  // namespace

kernels::SoftmaxCall softmax_call(std::int64_t dim, const CallArgs& args) {
  const Tensor& x = args.input(0);
  const auto rank = static_cast<std::int64_t>(x.dim());
  const std::int64_t axis = axis_of(dim, rank);
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
  call.access = access_class(args);
  return call;
}

void run_along_axis(kernels::AlongAxisInterface& kernel, const CallArgs& args, const Tensor& x,
                    std::int64_t dim, Tensor& out) {
  if (x.dim() == 0) {
    Tensor out_row = out.as_strided({1}, {1}, out.byte_offset());
    kernel.forward(args.context(), x.as_strided({1}, {1}, x.byte_offset()), 0, out_row);
  } else {
    kernel.forward(args.context(), x, axis_of(dim, static_cast<std::int64_t>(x.dim())), out);
  }
}

std::vector<bool> reduced_axes(const std::optional<Shape>& dim, std::size_t rank) {
  std::vector<bool> reduced(rank, !dim || dim->empty());
  if (dim && rank > 0) {
    for (std::int64_t a : *dim)
      reduced[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(rank) : a)] = true;
  }
  return reduced;
}

kernels::ReductionCall reduction_call(const std::vector<bool>& reduced, const CallArgs& args) {
  kernels::ReductionCall call;
  call.device = args.device();
  call.dtype = args.input(0).dtype();
  call.rank = static_cast<int>(reduced.size());
  // Axes past 63 cannot be marked; no kernel tells them apart (the CPU kernels read `reduced`).
  for (std::size_t i = 0; i < reduced.size() && i < 64; ++i)
    if (reduced[i]) call.reduced_mask |= std::uint64_t{1} << i;
  call.access = access_class(args);
  return call;
}

}  // namespace tileops::ops
