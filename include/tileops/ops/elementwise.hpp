// The elementwise family: AddFwdOp, MulFwdOp (manifest/elementwise.yaml). Inputs broadcast as in
// PyTorch and share one dtype (no type promotion in this wave).
#pragma once

#include <optional>

#include "tileops/op/op.hpp"

namespace tileops {

// out = a + alpha * b. `alpha` is an int or a float (Value), default 1.
class AddFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit AddFwdOp(Value alpha = Value(std::int64_t{1}),
                    std::optional<Target> target = std::nullopt);
  AddFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& a, const Tensor& b, const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;
};

// out = a * b.
class MulFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit MulFwdOp(std::optional<Target> target = std::nullopt);
  MulFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& a, const Tensor& b, const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;
};

}  // namespace tileops
