#include "reduction.hpp"

#include <algorithm>
#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

// A shape split at `axis` into outer x length x inner; a scalar is a slice of one.
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

// softmax (or log_softmax) along `dim`.
std::vector<double> along_axis(const std::vector<double>& x, const Shape& shape, std::int64_t dim,
                               bool log) {
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
      for (std::int64_t i = 0; i < s.length; ++i)
        y[at(i)] = log ? x[at(i)] - m - std::log(total) : std::exp(x[at(i)] - m) / total;
    }
  return y;
}

// For each element of x (row-major), the row-major index of the output it reduces into; `outputs`
// receives the number of outputs.
std::vector<std::size_t> output_index(const Shape& shape, const std::vector<bool>& reduced,
                                      std::size_t& outputs) {
  std::int64_t out_n = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (!reduced[a]) out_n *= shape[a];
  outputs = static_cast<std::size_t>(out_n);
  std::vector<std::size_t> where(static_cast<std::size_t>(shape.numel()));
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = 0; k < where.size(); ++k) {
    std::int64_t o = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      if (!reduced[a]) o = o * shape[a] + index[a];
    where[k] = static_cast<std::size_t>(o);
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return where;
}

// The number of elements each output of a reduction over `reduced` takes.
double reduced_count(const Shape& shape, const std::vector<bool>& reduced) {
  double n = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (reduced[a]) n *= static_cast<double>(shape[a]);
  return n;
}

std::optional<Shape> dim_of(const ParamMap& p) {
  const Value& dim = p.at("dim");
  return dim.is_none() ? std::nullopt : std::optional<Shape>(dim.as_int_list());
}

std::vector<Expected> softmax_ref(const ParamMap& p, const Inputs& in) {
  return {plain("output", softmax(in[0]->values, in[0]->shape, p.at("dim").as_int()))};
}

std::vector<Expected> log_softmax_ref(const ParamMap& p, const Inputs& in) {
  return {plain("output", log_softmax(in[0]->values, in[0]->shape, p.at("dim").as_int()))};
}

std::vector<Expected> sum_ref(const ParamMap& p, const Inputs& in) {
  Expected e{"output", {}, {}};
  e.values =
      sum(in[0]->values, in[0]->shape, reduced_axes(dim_of(p), in[0]->shape.size()), &e.scale);
  return {std::move(e)};
}

// The mean's error scales as the sum's, divided by the count: the mean of |terms|.
std::vector<Expected> mean_ref(const ParamMap& p, const Inputs& in) {
  const std::vector<bool> reduced = reduced_axes(dim_of(p), in[0]->shape.size());
  Expected e{"output", {}, {}};
  e.values = sum(in[0]->values, in[0]->shape, reduced, &e.scale);
  const double n = reduced_count(in[0]->shape, reduced);
  for (double& v : e.values) v /= n;
  for (double& s : e.scale) s /= n;
  return {std::move(e)};
}

std::vector<Expected> amax_ref(const ParamMap& p, const Inputs& in) {
  return {plain("output",
                amax(in[0]->values, in[0]->shape, reduced_axes(dim_of(p), in[0]->shape.size())))};
}

}  // namespace

std::vector<double> softmax(const std::vector<double>& x, const Shape& shape, std::int64_t dim) {
  return along_axis(x, shape, dim, false);
}

std::vector<double> log_softmax(const std::vector<double>& x, const Shape& shape,
                                std::int64_t dim) {
  return along_axis(x, shape, dim, true);
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
  std::size_t outputs = 0;
  const std::vector<std::size_t> where = output_index(shape, reduced, outputs);
  std::vector<double> y(outputs, 0.0);
  if (scale) scale->assign(y.size(), 0.0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    y[where[k]] += x[k];
    if (scale) (*scale)[where[k]] += std::abs(x[k]);
  }
  return y;
}

std::vector<double> amax(const std::vector<double>& x, const Shape& shape,
                         const std::vector<bool>& reduced) {
  std::size_t outputs = 0;
  const std::vector<std::size_t> where = output_index(shape, reduced, outputs);
  std::vector<double> y(outputs, -INFINITY);
  for (std::size_t k = 0; k < x.size(); ++k) {
    double& m = y[where[k]];
    // Once m is a NaN nothing compares greater, so it stays: NaN propagates.
    if (std::isnan(x[k]) || x[k] > m) m = x[k];
  }
  return y;
}

void add_reduction_references(ReferenceTable& table) {
  table.emplace("SoftmaxFwdOp", softmax_ref);
  table.emplace("LogSoftmaxFwdOp", log_softmax_ref);
  table.emplace("SumFwdOp", sum_ref);
  table.emplace("MeanFwdOp", mean_ref);
  table.emplace("AmaxFwdOp", amax_ref);
}

}  // namespace tileops::references
