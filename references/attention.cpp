#include "attention.hpp"

#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

std::vector<Expected> alibi_ref(const ParamMap& p, const Inputs&) {
  return {plain("output", alibi(p.at("num_heads").as_int(), p.at("seq_len").as_int()))};
}

}  // namespace

std::vector<double> alibi_slopes(std::int64_t heads) {
  std::int64_t m = 1;
  while (m * 2 <= heads) m *= 2;
  std::vector<double> slopes;
  for (std::int64_t h = 0; h < heads; ++h)
    slopes.push_back(
        h < m ? std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(m))
              : std::exp2(-4.0 * static_cast<double>(2 * (h - m) + 1) / static_cast<double>(m)));
  return slopes;
}

std::vector<double> alibi(std::int64_t heads, std::int64_t seq) {
  const std::vector<double> slopes = alibi_slopes(heads);
  std::vector<double> y;
  y.reserve(static_cast<std::size_t>(heads * seq * seq));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < seq; ++i)
      for (std::int64_t j = 0; j < seq; ++j)
        y.push_back(slopes[static_cast<std::size_t>(h)] * static_cast<double>(j - i));
  return y;
}

void add_attention_references(ReferenceTable& table) { table.emplace("AlibiFwdOp", alibi_ref); }

}  // namespace tileops::references
