#include "norm.hpp"

#include <cmath>

#include "families.hpp"
#include "tileops/ops/defaults.hpp"

namespace tileops::references {
namespace {

double eps_of(const ParamMap& params) {
  const Value* eps = params.find("eps");
  return eps && !eps->is_none() ? eps->as_float() : kDefaultNormEps;
}

// The product of the trailing `axes` axes of `shape`.
std::int64_t trailing(const Shape& shape, std::size_t axes) {
  std::int64_t n = 1;
  for (std::size_t i = shape.size() - axes; i < shape.size(); ++i) n *= shape[i];
  return n;
}

const std::vector<double>* values_of(const Inputs& in, std::size_t i) {
  return in[i] ? &in[i]->values : nullptr;
}

std::vector<Expected> rms_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  return {plain("output", rms_norm(in[0]->values, values_of(in, 1), n, eps_of(p)))};
}

std::vector<Expected> layer_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  Expected e{"output", {}, {}};
  e.values = layer_norm(in[0]->values, values_of(in, 1), values_of(in, 2), n,
                        p.at("eps").as_float(), &e.scale);
  return {std::move(e)};
}

// hidden = round_T(x + residual); output = rms_norm(hidden) [* weight]. The sum is rounded to T
// because both ops store it in a T tensor before normalising it (docs/manifest.md §4.1).
std::vector<Expected> add_then_rms_norm(const Inputs& in, const std::vector<double>* weight,
                                        std::int64_t n, double eps, const std::string& sum_name) {
  const std::vector<double>& x = in[0]->values;
  const std::vector<double>& res = in[1]->values;
  Expected sum{sum_name, std::vector<double>(x.size()), std::vector<double>(x.size())};
  for (std::size_t k = 0; k < x.size(); ++k) {
    sum.values[k] = round_to(in[0]->dtype, x[k] + res[k]);
    sum.scale[k] = std::abs(x[k]) + std::abs(res[k]);
  }
  Expected out = plain("output", rms_norm(sum.values, weight, n, eps));
  return {std::move(sum), std::move(out)};
}

std::vector<Expected> fused_add_rms_norm_ref(const ParamMap& p, const Inputs& in) {
  return add_then_rms_norm(in, values_of(in, 2), in[0]->shape.back(), eps_of(p), "residual");
}

std::vector<Expected> residual_rms_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  return add_then_rms_norm(in, values_of(in, 2), n, eps_of(p), "hidden");
}

}  // namespace

std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>* w,
                             std::int64_t n, double eps) {
  std::vector<double> y(x.size());
  const auto row = static_cast<std::size_t>(n);
  for (std::size_t r = 0; row > 0 && r * row < x.size(); ++r) {
    double sum_sq = 0.0;
    for (std::size_t i = 0; i < row; ++i) sum_sq += x[r * row + i] * x[r * row + i];
    const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (std::size_t i = 0; i < row; ++i)
      y[r * row + i] = x[r * row + i] * inv * (w ? (*w)[i] : 1.0);
  }
  return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<double>* w,
                               const std::vector<double>* b, std::int64_t n, double eps,
                               std::vector<double>* scale) {
  std::vector<double> y(x.size());
  if (scale) scale->assign(x.size(), 0.0);
  const auto row = static_cast<std::size_t>(n);
  for (std::size_t r = 0; row > 0 && r * row < x.size(); ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t i = 0; i < row; ++i) mean += x[r * row + i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < row; ++i) var += (x[r * row + i] - mean) * (x[r * row + i] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
    for (std::size_t i = 0; i < row; ++i) {
      const std::size_t k = r * row + i;
      const double wi = w ? (*w)[i] : 1.0;
      const double bi = b ? (*b)[i] : 0.0;
      y[k] = (x[k] - mean) * inv * wi + bi;
      if (scale)
        (*scale)[k] = (std::abs(x[k]) + std::abs(mean)) * inv * std::abs(wi) + std::abs(bi);
    }
  }
  return y;
}

void add_norm_references(ReferenceTable& table) {
  table.emplace("RMSNormFwdOp", rms_norm_ref);
  table.emplace("LayerNormFwdOp", layer_norm_ref);
  table.emplace("FusedAddRMSNormFwdOp", fused_add_rms_norm_ref);
  table.emplace("ResidualRMSNormFwdOp", residual_rms_norm_ref);
}

}  // namespace tileops::references
