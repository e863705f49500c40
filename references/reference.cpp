#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "families.hpp"
#include "references.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"

namespace tileops::references {
namespace {

const ReferenceTable& table() {
  static const ReferenceTable t = [] {
    ReferenceTable r;
    add_norm_references(r);
    add_reduction_references(r);
    add_elementwise_references(r);
    add_attention_references(r);
    add_activation_references(r);
    add_rope_references(r);
    add_gemm_references(r);
    return r;
  }();
  return t;
}

}  // namespace

HostTensor to_host(const Tensor& t) {
  if (!t.device().is_cpu())
    throw OpNotAvailableError(
        fmt::format("references: reading a tensor on {} is not available", t.device().str()));
  Tensor c = t.contiguous();
  HostTensor h{c.shape(), c.dtype(), {}};
  h.values.resize(static_cast<std::size_t>(c.numel()));
  const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
  for (std::size_t i = 0; i < h.values.size(); ++i)
    h.values[i] = load_as_double(c.dtype(), bytes + i * c.itemsize());
  return h;
}

double round_to(DType dtype, double value) {
  unsigned char buffer[8] = {};
  store_from_double(dtype, value, buffer);
  return load_as_double(dtype, buffer);
}

Reference find_reference(std::string_view op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> ops_with_references() {
  std::vector<std::string> names;
  for (const auto& [name, ref] : table()) names.push_back(name);
  return names;
}

Tolerance tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {1e-5, 1e-6};
    case DType::kFloat64:
      return {1e-12, 1e-12};
    case DType::kFloat16:
      return {std::ldexp(1.0, -10), 1e-5};
    case DType::kBFloat16:
      return {std::ldexp(1.0, -7), 1e-5};
    default:
      return is_floating(dtype) ? Tolerance{0.25, 1e-5} : Tolerance{0.0, 0.0};
  }
}

Comparison compare(const std::vector<double>& got, const Expected& want, Tolerance tol) {
  Comparison c;
  c.checked = std::min(got.size(), want.values.size());
  double worst_excess = -1.0;
  for (std::size_t k = 0; k < c.checked; ++k) {
    // A NaN or infinite expected value (the mean of no elements) is matched by that value alone.
    const double w = want.values[k];
    if (std::isnan(w) ? std::isnan(got[k]) : std::isinf(w) && got[k] == w) continue;
    const double err = std::abs(got[k] - w);
    const double scale =
        std::max(std::abs(want.values[k]), want.scale.empty() ? 0.0 : want.scale[k]);
    const double allowed = tol.rtol * scale + tol.atol;
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (scale > 0) c.max_rel_error = std::max(c.max_rel_error, err / scale);
    if (!(err <= allowed)) {
      ++c.bad;
      const double excess = std::isnan(err) ? INFINITY : err - allowed;
      if (excess > worst_excess) {
        worst_excess = excess;
        c.worst = k;
      }
    }
  }
  if (got.size() != want.values.size())
    c.bad += std::max(got.size(), want.values.size()) - c.checked;
  return c;
}

std::string Comparison::str(const std::vector<double>& got, const std::vector<double>& want,
                            Tolerance tol) const {
  if (got.size() != want.size())
    return fmt::format("{} elements where {} are expected", got.size(), want.size());
  if (bad == 0)
    return fmt::format("all {} elements within tolerance (max abs error {:.3e}, max rel {:.3e})",
                       checked, max_abs_error, max_rel_error);
  return fmt::format(
      "{} of {} elements out of tolerance; worst at {}: got {}, want {} (rtol {:g}, atol {:g})",
      bad, checked, worst, got[worst], want[worst], tol.rtol, tol.atol);
}

}  // namespace tileops::references

namespace tileops::references {

Expected plain(std::string name, std::vector<double> values) {
  std::vector<double> scale(values.size());
  std::transform(values.begin(), values.end(), scale.begin(), [](double v) { return std::abs(v); });
  return {std::move(name), std::move(values), std::move(scale)};
}

}  // namespace tileops::references
