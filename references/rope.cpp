#include "rope.hpp"

#include <fmt/format.h>

#include <cmath>

#include "families.hpp"
#include "tileops/core/error.hpp"

namespace tileops::references {
namespace {

// Inputs in signature order: positions [N], query [N, Hq, D], key [N, Hk, D], cos_sin_cache [P, R].
// Both written inputs are given by name, with their rotated values.
std::vector<Expected> rope_ref(const ParamMap& p, const Inputs& in) {
  const bool is_neox = p.at("is_neox").as_bool();
  const HostTensor& cache = *in[3];
  std::vector<Expected> written;
  for (std::size_t i = 1; i <= 2; ++i) {
    const HostTensor& x = *in[i];
    Expected e{i == 1 ? "query" : "key", {}, {}};
    e.values = rope(x.values, x.shape[1], x.shape[2], in[0]->values, cache.values, cache.shape[1],
                    is_neox, &e.scale);
    written.push_back(std::move(e));
  }
  return written;
}

}  // namespace

std::vector<double> rope(const std::vector<double>& x, std::int64_t heads, std::int64_t head_size,
                         const std::vector<double>& positions, const std::vector<double>& cache,
                         std::int64_t rotary_dim, bool is_neox, std::vector<double>* scale) {
  std::vector<double> y = x;
  if (scale) {
    scale->resize(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) (*scale)[k] = std::abs(x[k]);
  }
  const auto half = static_cast<std::size_t>(rotary_dim / 2);
  const auto rows = rotary_dim > 0 ? static_cast<std::int64_t>(cache.size()) / rotary_dim : 0;
  const auto d = static_cast<std::size_t>(head_size);
  for (std::size_t n = 0; n < positions.size() && half > 0; ++n) {
    const double p = positions[n];
    if (!(p >= 0 && p < static_cast<double>(rows)))
      throw CheckError(
          fmt::format("references::rope: position {} of token {} is outside [0, {})", p, n, rows));
    const std::size_t row = static_cast<std::size_t>(p) * static_cast<std::size_t>(rotary_dim);
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const std::size_t base = (n * static_cast<std::size_t>(heads) + h) * d;
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t k1 = base + (is_neox ? i : 2 * i);
        const std::size_t k2 = base + (is_neox ? i + half : 2 * i + 1);
        const double c = cache[row + i], s = cache[row + half + i];
        y[k1] = x[k1] * c - x[k2] * s;
        y[k2] = x[k2] * c + x[k1] * s;
        if (scale) {
          (*scale)[k1] = std::abs(x[k1] * c) + std::abs(x[k2] * s);
          (*scale)[k2] = std::abs(x[k2] * c) + std::abs(x[k1] * s);
        }
      }
    }
  }
  return y;
}

void add_rope_references(ReferenceTable& table) { table.emplace("RopeFwdOp", rope_ref); }

}  // namespace tileops::references
