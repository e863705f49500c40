// ResidualRMSNormFwdOp: a composite of AddFwdOp and RMSNormFwdOp, held at construction.
#include "ops/families.hpp"
#include "ops/op_util.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {

const OpClass& ResidualRMSNormFwdOp::op_class() {
  static const OpClass cls =
      OpClass("ResidualRMSNormFwdOp").stage<AddFwdOp>("add").stage<RMSNormFwdOp>("norm");
  return cls;
}

ResidualRMSNormFwdOp::ResidualRMSNormFwdOp(Shape normalized_shape, std::optional<double> eps,
                                           std::optional<Target> target)
    : ResidualRMSNormFwdOp(ParamMap{{"normalized_shape", Value(std::move(normalized_shape))},
                                    {"eps", ops::optional_float(eps)}},
                           std::move(target)) {}

// The sub-ops' construction arguments are settled here, so both are held before any call
// (seeds: composite-ops Table 1, row 1).
ResidualRMSNormFwdOp::ResidualRMSNormFwdOp(const ParamMap& params, std::optional<Target> target)
    : Op(op_class(), params, std::move(target)),
      add_(delegate_for<AddFwdOp>("add", Identity())),
      norm_(delegate_for<RMSNormFwdOp>(
          "norm", Identity(), nullptr,
          ParamMap{{"normalized_shape", param("normalized_shape")}, {"eps", param("eps")}})) {}

ResidualRMSNormFwdOp::Result ResidualRMSNormFwdOp::operator()(const Tensor& x,
                                                              const Tensor& residual,
                                                              const std::optional<Tensor>& weight,
                                                              const CallOptions& options) {
  const std::optional<Tensor> inputs[] = {x, residual, weight};
  CallResult r = call(inputs, options);
  return {std::move(*r[0]), std::move(*r[1])};
}

CallResult ResidualRMSNormFwdOp::forward(const CallArgs& args) {
  Tensor hidden = add_(args.input(0), args.input(1), CallOptions{std::nullopt, &args.stream});
  std::optional<Tensor> weight = args.has(2) ? std::optional<Tensor>(args.input(2)) : std::nullopt;
  Tensor output = norm_(hidden, weight, CallOptions{std::nullopt, &args.stream});
  return {hidden, output};
}

}  // namespace tileops
