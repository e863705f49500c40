// The norm family: RMSNormFwdOp, LayerNormFwdOp, FusedAddRMSNormFwdOp (manifest/norm.yaml).
#pragma once

#include <optional>

#include "tileops/op/op.hpp"

namespace tileops {

// torch.nn.functional.rms_norm. eps = nullopt: float32's machine epsilon (docs/manifest.md).
class RMSNormFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit RMSNormFwdOp(Shape normalized_shape, std::optional<double> eps = std::nullopt,
                        std::optional<Target> target = std::nullopt);
  RMSNormFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                    const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;

 private:
  // Typed copies of the params, made once from params() (the single source) for the call path.
  std::int64_t row_length_;
  double eps_;
};

// torch.nn.functional.layer_norm (biased variance).
class LayerNormFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit LayerNormFwdOp(Shape normalized_shape, double eps = 1e-5,
                          std::optional<Target> target = std::nullopt);
  LayerNormFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                    const std::optional<Tensor>& bias = std::nullopt,
                    const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;

 private:
  std::int64_t row_length_;
  double eps_;
};

// residual <- x + residual (in place); returns rms_norm(residual) * weight.
class FusedAddRMSNormFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit FusedAddRMSNormFwdOp(std::optional<double> eps = std::nullopt,
                                std::optional<Target> target = std::nullopt);
  FusedAddRMSNormFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const Tensor& x, const Tensor& residual, const Tensor& weight,
                    const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;

 private:
  double eps_;
};

}  // namespace tileops

namespace tileops {

class AddFwdOp;

// A composite op: hidden = x + residual (stage `add`, an AddFwdOp), output = rms_norm(hidden)
// [* weight] (stage `norm`, an RMSNormFwdOp). Returns {hidden, output}.
class ResidualRMSNormFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  explicit ResidualRMSNormFwdOp(Shape normalized_shape, std::optional<double> eps = std::nullopt,
                                std::optional<Target> target = std::nullopt);
  ResidualRMSNormFwdOp(const ParamMap& params, std::optional<Target> target);

  struct Result {
    Tensor hidden;
    Tensor output;
  };
  Result operator()(const Tensor& x, const Tensor& residual,
                    const std::optional<Tensor>& weight = std::nullopt,
                    const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;

 private:
  AddFwdOp& add_;
  RMSNormFwdOp& norm_;
};

}  // namespace tileops
