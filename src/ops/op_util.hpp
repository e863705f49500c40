// Small helpers the op families share in forward().
#pragma once

#include <optional>

#include "tileops/op/op.hpp"

namespace tileops::ops {

// Input i as a contiguous tensor (kernels take contiguous inputs; the signature accepts any
// strides unless it declares `contiguous: true`).
inline Tensor contiguous_input(const CallArgs& args, std::size_t i) { return args.input(i).contiguous(); }

inline std::optional<Tensor> contiguous_optional(const CallArgs& args, std::size_t i) {
  if (!args.has(i)) return std::nullopt;
  return args.input(i).contiguous();
}

inline const Tensor* ptr(const std::optional<Tensor>& t) { return t ? &*t : nullptr; }

// A `float | None` param as the ParamMap holds it.
inline Value optional_float(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

// The first output of a call.
inline Tensor first_output(CallResult result) { return std::move(*result.at(0)); }

}  // namespace tileops::ops
