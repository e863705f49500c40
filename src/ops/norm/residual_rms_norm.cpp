// ResidualRMSNormFwdOp (manifest/norm.yaml), a composite: hidden = x + residual (stage `add`, an
// AddFwdOp), output = rms_norm(hidden) [* weight] (stage `norm`, an RMSNormFwdOp). The generated
// class holds both stages from construction, with the params they share taken by name.
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops {

CallResult ResidualRMSNormFwdOp::forward(const CallArgs& args) {
  const CallOptions on_stream{std::nullopt, &args.stream};
  Tensor hidden = add_(args.input(0), args.input(1), on_stream);
  std::optional<Tensor> weight = args.has(2) ? std::optional<Tensor>(args.input(2)) : std::nullopt;
  Tensor output = norm_(hidden, weight, on_stream);
  return {hidden, output};
}

}  // namespace tileops
