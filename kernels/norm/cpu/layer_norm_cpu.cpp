// layer_norm: mean, then the biased variance of the centred row (two passes, so the variance
// does not suffer the cancellation of E[x^2] - E[x]^2), then the affine transform.
#include <cmath>
#include <cstdint>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/norm/cpu/norm_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

template <class T>
void layer_norm_row(const T* x, const T* weight, const T* bias, float eps, std::int64_t n, T* out) {
  const float mean = detail::cascade_sum(n, [x](std::int64_t i) { return to_float(x[i]); }) /
                     static_cast<float>(n);
  const float sum_sq = detail::cascade_sum(n, [x, mean](std::int64_t i) {
    const float d = to_float(x[i]) - mean;
    return d * d;
  });
  const float rstd = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
  for (std::int64_t i = 0; i < n; ++i) {
    float y = (to_float(x[i]) - mean) * rstd;
    if (weight != nullptr) y *= to_float(weight[i]);
    if (bias != nullptr) y += to_float(bias[i]);
    out[i] = from_float<T>(y);
  }
}

}  // namespace

void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps,
                std::int64_t n, Tensor& out) {
  const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
  if (rows == 0) return;
  detail::dispatch_float(x.dtype(), "layer_norm(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    const T* xs = x.data<const T>();
    const T* ws = weight != nullptr ? weight->data<const T>() : nullptr;
    const T* bs = bias != nullptr ? bias->data<const T>() : nullptr;
    T* os = out.data<T>();
    const auto eps_f = static_cast<float>(eps);
    detail::parallel_for(rows, 6 * n, [&](std::int64_t r) {
      layer_norm_row(xs + r * n, ws, bs, eps_f, n, os + r * n);
    });
  });
}

}  // namespace tileops::kernels::cpu
