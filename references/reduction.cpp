#include "reduction.hpp"

#include <algorithm>
#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

// A shape split at `axis` into outer x length x inner.
struct AxisSplit {
  std::int64_t outer = 1, length = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, std::int64_t axis) {
  AxisSplit s;
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (axis < 0) axis += rank;
  for (std::int64_t i = 0; i < rank; ++i)
    (i < axis ? s.outer : i == axis ? s.length : s.inner) *= shape[i];
  return s;
}

std::optional<Shape> dim_of(const ParamMap& p) {
  const Value& dim = p.at("dim");
  return dim.is_none() ? std::nullopt : std::optional<Shape>(dim.as_int_list());
}

std::vector<Expected> softmax_ref(const ParamMap& p, const Inputs& in) {
  return {plain("output", softmax(in[0]->values, in[0]->shape, p.at("dim").as_int()))};
}

std::vector<Expected> sum_ref(const ParamMap& p, const Inputs& in) {
  Expected e{"output", {}, {}};
  e.values =
      sum(in[0]->values, in[0]->shape, reduced_axes(dim_of(p), in[0]->shape.size()), &e.scale);
  return {std::move(e)};
}

}  // namespace

std::vector<double> softmax(const std::vector<double>& x, const Shape& shape, std::int64_t dim) {
  if (shape.empty()) return std::vector<double>(x.size(), 1.0);
  std::vector<double> y(x.size());
  const AxisSplit s = split_at(shape, dim);
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t j = 0; j < s.inner; ++j) {
      auto at = [&](std::int64_t i) {
        return static_cast<std::size_t>((o * s.length + i) * s.inner + j);
      };
      double m = -INFINITY, total = 0.0;
      for (std::int64_t i = 0; i < s.length; ++i) m = std::max(m, x[at(i)]);
      for (std::int64_t i = 0; i < s.length; ++i) total += std::exp(x[at(i)] - m);
      for (std::int64_t i = 0; i < s.length; ++i) y[at(i)] = std::exp(x[at(i)] - m) / total;
    }
  return y;
}

std::vector<bool> reduced_axes(const std::optional<Shape>& dim, std::size_t rank) {
  std::vector<bool> reduced(rank, !dim || dim->empty());
  if (dim)
    for (std::int64_t a : *dim) {
      const std::int64_t axis = a < 0 ? a + static_cast<std::int64_t>(rank) : a;
      if (axis >= 0 && axis < static_cast<std::int64_t>(rank))
        reduced[static_cast<std::size_t>(axis)] = true;
    }
  return reduced;
}

std::vector<double> sum(const std::vector<double>& x, const Shape& shape,
                        const std::vector<bool>& reduced, std::vector<double>* scale) {
  std::int64_t out_n = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (!reduced[a]) out_n *= shape[a];
  std::vector<double> y(static_cast<std::size_t>(out_n), 0.0);
  if (scale) scale->assign(y.size(), 0.0);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::int64_t o = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      if (!reduced[a]) o = o * shape[a] + index[a];
    y[static_cast<std::size_t>(o)] += x[k];
    if (scale) (*scale)[static_cast<std::size_t>(o)] += std::abs(x[k]);
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return y;
}

void add_reduction_references(ReferenceTable& table) {
  table.emplace("SoftmaxFwdOp", softmax_ref);
  table.emplace("SumFwdOp", sum_ref);
}

}  // namespace tileops::references
