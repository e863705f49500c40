#include "elementwise.hpp"

#include <algorithm>
#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

std::vector<Expected> binary_ref(const Inputs& in, const std::function<double(double, double)>& f,
                                 const std::function<double(double, double)>& magnitude) {
  Expected e{"output", {}, {}};
  e.values = broadcast_binary(in[0]->values, in[0]->shape, in[1]->values, in[1]->shape, f,
                              magnitude, &e.scale);
  return {std::move(e)};
}

std::vector<Expected> add_ref(const ParamMap& p, const Inputs& in) {
  const double alpha = p.at("alpha").as_float();
  return binary_ref(
      in, [alpha](double a, double b) { return a + alpha * b; },
      [alpha](double a, double b) { return std::abs(a) + std::abs(alpha * b); });
}

std::vector<Expected> mul_ref(const ParamMap&, const Inputs& in) {
  return binary_ref(
      in, [](double a, double b) { return a * b; },
      [](double a, double b) { return std::abs(a * b); });
}

}  // namespace

std::vector<double> broadcast_binary(const std::vector<double>& a, const Shape& sa,
                                     const std::vector<double>& b, const Shape& sb,
                                     const std::function<double(double, double)>& f,
                                     const std::function<double(double, double)>& magnitude,
                                     std::vector<double>* scale) {
  const std::size_t rank = std::max(sa.size(), sb.size());
  Shape out = Shape::filled(rank, 1);
  auto dim_of = [rank](const Shape& s, std::size_t axis) {
    return axis + s.size() < rank ? 1 : s[axis + s.size() - rank];
  };
  // An axis of length 1 takes the other's length, 0 included (max would turn [0] + [1] into [1]).
  for (std::size_t axis = 0; axis < rank; ++axis)
    out[axis] = dim_of(sa, axis) == 1 ? dim_of(sb, axis) : dim_of(sa, axis);
  std::vector<double> y(static_cast<std::size_t>(out.numel()));
  if (scale) scale->assign(y.size(), 0.0);
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t k = 0; k < y.size(); ++k) {
    std::int64_t ia = 0, ib = 0;
    for (std::size_t axis = 0; axis < rank; ++axis) {
      const std::int64_t da = dim_of(sa, axis), db = dim_of(sb, axis);
      ia = ia * da + (da == 1 ? 0 : index[axis]);
      ib = ib * db + (db == 1 ? 0 : index[axis]);
    }
    const double x = a[static_cast<std::size_t>(ia)], z = b[static_cast<std::size_t>(ib)];
    y[k] = f(x, z);
    if (scale) (*scale)[k] = magnitude(x, z);
    for (std::size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < out[axis]) break;
      index[axis] = 0;
    }
  }
  return y;
}

void add_elementwise_references(ReferenceTable& table) {
  table.emplace("AddFwdOp", add_ref);
  table.emplace("MulFwdOp", mul_ref);
}

}  // namespace tileops::references
