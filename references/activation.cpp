// Float64 references of the activation family (manifest/activation.yaml).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "families.hpp"

namespace tileops::references {
namespace {

double silu(double g) { return g / (1.0 + std::exp(-g)); }

double gelu(double g, bool tanh) {
  if (tanh) {
    const double inner = std::sqrt(2.0 / std::numbers::pi) * (g + 0.044715 * g * g * g);
    return 0.5 * g * (1.0 + std::tanh(inner));
  }
  return 0.5 * g * (1.0 + std::erf(g / std::numbers::sqrt2));
}

// The magnitude a kernel's float32 error scales with. SiLU's formula does not cancel: |value|.
// GELU's `1 + erf(...)` (or `1 + tanh(...)`) cancels towards 0 for negative g, in float32 as in
// torch, leaving an error of float32's epsilon times 0.5 |g|: the scale is 0.5 |g| (2 where the
// result is larger).
double gelu_scale(double g, double value) { return std::max(std::abs(value), 0.5 * std::abs(g)); }

bool is_tanh(const ParamMap& p) { return p.at("approximate").as_str() == "tanh"; }

std::vector<Expected> silu_ref(const ParamMap&, const Inputs& in) {
  Expected e{"output", {}, {}};
  for (double g : in[0]->values) {
    e.values.push_back(silu(g));
    e.scale.push_back(std::abs(e.values.back()));
  }
  return {std::move(e)};
}

std::vector<Expected> gelu_ref(const ParamMap& p, const Inputs& in) {
  const bool tanh = is_tanh(p);
  Expected e{"output", {}, {}};
  for (double g : in[0]->values) {
    e.values.push_back(gelu(g, tanh));
    e.scale.push_back(gelu_scale(g, e.values.back()));
  }
  return {std::move(e)};
}

// x's rows are [gate | up] of N each: output = act(gate) * up, scaled by act's scale * |up|.
template <class Act, class Scale>
std::vector<Expected> gated_ref(const Inputs& in, Act act, Scale scale) {
  const HostTensor& x = *in[0];
  Expected e{"output", {}, {}};
  if (x.values.empty()) return {std::move(e)};
  const std::size_t n = static_cast<std::size_t>(x.shape.back() / 2);
  const std::size_t rows = n == 0 ? 0 : x.values.size() / (2 * n);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const double g = x.values[r * 2 * n + i];
      const double u = x.values[r * 2 * n + n + i];
      const double a = act(g);
      e.values.push_back(a * u);
      e.scale.push_back(scale(g, a) * std::abs(u));
    }
  }
  return {std::move(e)};
}

std::vector<Expected> silu_and_mul_ref(const ParamMap&, const Inputs& in) {
  return gated_ref(
      in, [](double g) { return silu(g); }, [](double, double a) { return std::abs(a); });
}

std::vector<Expected> gelu_and_mul_ref(const ParamMap& p, const Inputs& in) {
  const bool tanh = is_tanh(p);
  return gated_ref(
      in, [tanh](double g) { return gelu(g, tanh); },
      [](double g, double a) { return gelu_scale(g, a); });
}

}  // namespace

void add_activation_references(ReferenceTable& table) {
  table.emplace("SiluFwdOp", silu_ref);
  table.emplace("GeluFwdOp", gelu_ref);
  table.emplace("SiluAndMulFwdOp", silu_and_mul_ref);
  table.emplace("GeluAndMulFwdOp", gelu_and_mul_ref);
}

}  // namespace tileops::references
