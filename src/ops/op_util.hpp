// Small helpers the op families share in forward().
#pragma once

#include <optional>
#include <utility>

#include "tileops/op/op.hpp"

namespace tileops::ops {

// Input i as a contiguous tensor (kernels take contiguous inputs; the signature accepts any
// strides unless it declares `contiguous: true`): the caller's tensor itself when it already is
// contiguous, so the usual call copies no Tensor, else a contiguous copy this object owns. An
// absent optional input gives get() == nullptr.
class ContiguousInput {
 public:
  ContiguousInput(const CallArgs& args, std::size_t i) {
    if (!args.has(i)) return;
    const Tensor& given = args.input(i);
    if (given.is_contiguous()) {
      tensor_ = &given;
    } else {
      copy_ = given.contiguous();
      tensor_ = &*copy_;
    }
  }
  ContiguousInput(const ContiguousInput&) = delete;
  ContiguousInput& operator=(const ContiguousInput&) = delete;

  const Tensor& operator*() const noexcept { return *tensor_; }
  const Tensor* operator->() const noexcept { return tensor_; }
  const Tensor* get() const noexcept { return tensor_; }

 private:
  std::optional<Tensor> copy_;
  const Tensor* tensor_ = nullptr;
};

// A `float | None` param as the ParamMap holds it.
inline Value optional_float(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

// The result of a forward with one output, which is moved in (`return {out}` would copy it).
inline CallResult single_output(Tensor out) {
  CallResult result;
  result.emplace_back(std::move(out));
  return result;
}

// The first output of a call.
inline Tensor first_output(CallResult result) { return std::move(*result.at(0)); }

}  // namespace tileops::ops
