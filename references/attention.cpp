#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

// output[h, i, j] = slope[h] * (j - i), slopes of the ALiBi paper (docs/manifest.md §4.6).
std::vector<Expected> alibi_ref(const ParamMap& p, const Inputs&) {
  const std::int64_t heads = p.at("num_heads").as_int();
  const std::int64_t s = p.at("seq_len").as_int();
  std::int64_t m = 1;
  while (m * 2 <= heads) m *= 2;
  std::vector<double> y(static_cast<std::size_t>(heads * s * s));
  for (std::int64_t h = 0; h < heads; ++h) {
    const double slope =
        h < m ? std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(m))
              : std::exp2(-4.0 * static_cast<double>(2 * (h - m) + 1) / static_cast<double>(m));
    for (std::int64_t i = 0; i < s; ++i)
      for (std::int64_t j = 0; j < s; ++j)
        y[static_cast<std::size_t>((h * s + i) * s + j)] = slope * static_cast<double>(j - i);
  }
  return {plain("output", std::move(y))};
}

}  // namespace

void add_attention_references(ReferenceTable& table) { table.emplace("AlibiFwdOp", alibi_ref); }

}  // namespace tileops::references
