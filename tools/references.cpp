#include "references.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "tileops/core/error.hpp"

namespace tileops::cli {
namespace {

using Inputs = std::vector<std::optional<HostTensor>>;

// eps = None: the float32 epsilon (docs/manifest.md §4.1).
double eps_of(const ParamMap& params) {
  const Value* eps = params.find("eps");
  return eps && !eps->is_none() ? eps->as_float() : 1.1920928955078125e-07;
}

std::int64_t trailing(const Shape& shape, std::size_t axes) {
  std::int64_t n = 1;
  for (std::size_t i = shape.size() - axes; i < shape.size(); ++i) n *= shape[i];
  return n;
}

Expected plain(std::string name, std::vector<double> values) {
  std::vector<double> scale(values.size());
  std::transform(values.begin(), values.end(), scale.begin(), [](double v) { return std::abs(v); });
  return {std::move(name), std::move(values), std::move(scale)};
}

// output = x / sqrt(mean(x^2) + eps) [* weight] over rows of length n.
Expected rms_norm(const std::vector<double>& x, const HostTensor* weight, std::int64_t n,
                  double eps, std::string name = "output") {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r * n < x.size(); ++r) {
    double ss = 0.0;
    for (std::int64_t i = 0; i < n; ++i) ss += x[r * n + i] * x[r * n + i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (std::int64_t i = 0; i < n; ++i)
      y[r * n + i] = x[r * n + i] * inv * (weight ? weight->values[i] : 1.0);
  }
  return plain(std::move(name), std::move(y));
}

std::vector<Expected> rms_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  return {rms_norm(in[0]->values, in[1] ? &*in[1] : nullptr, n, eps_of(p))};
}

std::vector<Expected> layer_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::vector<double>& x = in[0]->values;
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  const double eps = p.at("eps").as_float();
  Expected e{"output", std::vector<double>(x.size()), std::vector<double>(x.size())};
  for (std::size_t r = 0; r * n < x.size(); ++r) {
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t k = r * n + i;
      const double w = in[1] ? in[1]->values[i] : 1.0;
      const double b = in[2] ? in[2]->values[i] : 0.0;
      e.values[k] = (x[k] - mean) * inv * w + b;
      e.scale[k] = (std::abs(x[k]) + std::abs(mean)) * inv * std::abs(w) + std::abs(b);
    }
  }
  return {std::move(e)};
}

// hidden = round_T(x + residual); output = rms_norm(hidden) [* weight]. The sum is rounded to T
// because both ops store it in a T tensor before normalising it (docs/manifest.md §4.1).
std::vector<Expected> add_then_rms_norm(const Inputs& in, const HostTensor* weight, std::int64_t n,
                                        double eps, const std::string& sum_name) {
  const std::vector<double>& x = in[0]->values;
  const std::vector<double>& res = in[1]->values;
  Expected sum{sum_name, std::vector<double>(x.size()), std::vector<double>(x.size())};
  for (std::size_t k = 0; k < x.size(); ++k) {
    sum.values[k] = round_to(in[0]->dtype, x[k] + res[k]);
    sum.scale[k] = std::abs(x[k]) + std::abs(res[k]);
  }
  Expected out = rms_norm(sum.values, weight, n, eps);
  return {std::move(sum), std::move(out)};
}

std::vector<Expected> fused_add_rms_norm_ref(const ParamMap& p, const Inputs& in) {
  return add_then_rms_norm(in, &*in[2], in[0]->shape.back(), eps_of(p), "residual");
}

std::vector<Expected> residual_rms_norm_ref(const ParamMap& p, const Inputs& in) {
  const std::int64_t n = trailing(in[0]->shape, p.at("normalized_shape").as_int_list().size());
  return add_then_rms_norm(in, in[2] ? &*in[2] : nullptr, n, eps_of(p), "hidden");
}

// Splits a shape at `axis` into outer x length x inner.
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

std::vector<Expected> softmax_ref(const ParamMap& p, const Inputs& in) {
  const std::vector<double>& x = in[0]->values;
  std::vector<double> y(x.size());
  if (in[0]->shape.empty()) return {plain("output", std::vector<double>(x.size(), 1.0))};
  const AxisSplit s = split_at(in[0]->shape, p.at("dim").as_int());
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t j = 0; j < s.inner; ++j) {
      auto at = [&](std::int64_t i) {
        return static_cast<std::size_t>((o * s.length + i) * s.inner + j);
      };
      double m = -INFINITY, sum = 0.0;
      for (std::int64_t i = 0; i < s.length; ++i) m = std::max(m, x[at(i)]);
      for (std::int64_t i = 0; i < s.length; ++i) sum += std::exp(x[at(i)] - m);
      for (std::int64_t i = 0; i < s.length; ++i) y[at(i)] = std::exp(x[at(i)] - m) / sum;
    }
  return {plain("output", std::move(y))};
}

std::vector<Expected> sum_ref(const ParamMap& p, const Inputs& in) {
  const Shape& shape = in[0]->shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), true);
  const Value& dim = p.at("dim");
  if (!dim.is_none() && !dim.as_int_list().empty()) {
    std::fill(reduced.begin(), reduced.end(), false);
    for (std::int64_t a : dim.as_int_list())
      reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
  }
  std::int64_t out_n = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (!reduced[a]) out_n *= shape[a];
  Expected e{"output", std::vector<double>(static_cast<std::size_t>(out_n)),
             std::vector<double>(static_cast<std::size_t>(out_n))};
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = 0; k < in[0]->values.size(); ++k) {
    std::int64_t o = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      if (!reduced[a]) o = o * shape[a] + index[a];
    e.values[static_cast<std::size_t>(o)] += in[0]->values[k];
    e.scale[static_cast<std::size_t>(o)] += std::abs(in[0]->values[k]);
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return {std::move(e)};
}

// a (op) b with PyTorch broadcasting; scale = |a| + |b term|.
std::vector<Expected> broadcast_binary(const Inputs& in,
                                       const std::function<double(double, double)>& f,
                                       const std::function<double(double, double)>& magnitude) {
  const Shape& sa = in[0]->shape;
  const Shape& sb = in[1]->shape;
  const std::size_t rank = std::max(sa.size(), sb.size());
  Shape out = Shape::filled(rank, 1);
  auto dim_of = [rank](const Shape& s, std::size_t a) {
    return a + s.size() < rank ? 1 : s[a + s.size() - rank];
  };
  for (std::size_t a = 0; a < rank; ++a) out[a] = std::max(dim_of(sa, a), dim_of(sb, a));
  Expected e{"output", {}, {}};
  e.values.resize(static_cast<std::size_t>(out.numel()));
  e.scale.resize(e.values.size());
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t k = 0; k < e.values.size(); ++k) {
    std::int64_t ia = 0, ib = 0;
    for (std::size_t a = 0; a < rank; ++a) {
      const std::int64_t da = dim_of(sa, a), db = dim_of(sb, a);
      ia = ia * da + (da == 1 ? 0 : index[a]);
      ib = ib * db + (db == 1 ? 0 : index[a]);
    }
    const double x = in[0]->values[static_cast<std::size_t>(ia)],
                 y = in[1]->values[static_cast<std::size_t>(ib)];
    e.values[k] = f(x, y);
    e.scale[k] = magnitude(x, y);
    for (std::size_t a = rank; a-- > 0;) {
      if (++index[a] < out[a]) break;
      index[a] = 0;
    }
  }
  return {std::move(e)};
}

std::vector<Expected> add_ref(const ParamMap& p, const Inputs& in) {
  const double alpha = p.at("alpha").as_float();
  return broadcast_binary(
      in, [alpha](double a, double b) { return a + alpha * b; },
      [alpha](double a, double b) { return std::abs(a) + std::abs(alpha * b); });
}

std::vector<Expected> mul_ref(const ParamMap&, const Inputs& in) {
  return broadcast_binary(
      in, [](double a, double b) { return a * b; },
      [](double a, double b) { return std::abs(a * b); });
}

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

using Reference = std::vector<Expected> (*)(const ParamMap&, const Inputs&);

const std::map<std::string, Reference, std::less<>>& references() {
  static const std::map<std::string, Reference, std::less<>> table{
      {"RMSNormFwdOp", rms_norm_ref},
      {"LayerNormFwdOp", layer_norm_ref},
      {"FusedAddRMSNormFwdOp", fused_add_rms_norm_ref},
      {"ResidualRMSNormFwdOp", residual_rms_norm_ref},
      {"SoftmaxFwdOp", softmax_ref},
      {"SumFwdOp", sum_ref},
      {"AddFwdOp", add_ref},
      {"MulFwdOp", mul_ref},
      {"AlibiFwdOp", alibi_ref},
  };
  return table;
}

}  // namespace

std::optional<std::vector<Expected>> reference_outputs(
    std::string_view op, const ParamMap& params,
    const std::vector<std::optional<HostTensor>>& inputs) {
  auto it = references().find(op);
  if (it == references().end()) return std::nullopt;
  return it->second(params, inputs);
}

double relative_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 1e-5;
    case DType::kFloat64:
      return 1e-12;
    case DType::kFloat16:
      return 1.0 / 1024.0;
    case DType::kBFloat16:
      return 1.0 / 128.0;
    default:
      return is_floating(dtype) ? 0.25 : 0.0;
  }
}

double absolute_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 1e-6;
    case DType::kFloat64:
      return 1e-12;
    default:
      return is_floating(dtype) ? 1e-5 : 0.0;
  }
}

}  // namespace tileops::cli
