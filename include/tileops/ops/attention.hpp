// The attention family: AlibiFwdOp (manifest/attention.yaml).
#pragma once

#include <optional>
#include <string>

#include "tileops/op/op.hpp"

namespace tileops {

// The ALiBi bias [num_heads, seq_len, seq_len] of `out_dtype` on `device` (no tensor input).
class AlibiFwdOp final : public Op {
 public:
  static const OpClass& op_class();
  AlibiFwdOp(std::int64_t num_heads, std::int64_t seq_len, std::string device,
             DType out_dtype = DType::kFloat32, std::optional<Target> target = std::nullopt);
  AlibiFwdOp(const ParamMap& params, std::optional<Target> target);

  Tensor operator()(const CallOptions& options = {});

 protected:
  CallResult forward(const CallArgs& args) override;
};

}  // namespace tileops
