// The reduction family: SoftmaxFwdOp, SumFwdOp (manifest/reduction.yaml).
#pragma once

#include <optional>
#include <vector>

#include "tileops/op/op.hpp"

namespace tileops {

// torch.nn.functional.softmax along `dim`.
class SoftmaxFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit SoftmaxFwdOp(std::int64_t dim = -1, std::optional<Target> target = std::nullopt);
  SoftmaxFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& x, const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;
};

// torch.sum over `dim` (nullopt or empty: every axis), keeping reduced axes when `keepdim`.
class SumFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit SumFwdOp(std::optional<Shape> dim = std::nullopt, bool keepdim = false,
                    std::optional<Target> target = std::nullopt);
  SumFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& x, const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;
};

}  // namespace tileops
