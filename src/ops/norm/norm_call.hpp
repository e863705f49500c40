// The call spec every norm op builds: rows of `n` elements of the first input's dtype.
#pragma once

#include "kernels/norm/interface.hpp"
#include "ops/op_support.hpp"

namespace tileops::ops {

inline kernels::NormCall norm_call(const CallArgs& args, std::int64_t n, double eps,
                                   bool has_weight, bool has_bias = false) {
  kernels::NormCall call;
  call.device = args.device();
  call.n = n;
  call.eps = eps;
  call.dtype = args.input(0).dtype();
  call.has_weight = has_weight;
  call.has_bias = has_bias;
  call.access = access_class(args);
  return call;
}

}  // namespace tileops::ops
