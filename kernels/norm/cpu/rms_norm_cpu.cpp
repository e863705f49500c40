// rms_norm_rowwise and fused_add_rms_norm: one straightforward pass per row (the sum of squares
// cascaded, Note [Cascade summation]).
#include <cmath>
#include <cstdint>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/norm/cpu/norm_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

// Normalizes one row of n elements; weight may be null. Also the second half of
// fused_add_rms_norm, which hands it the freshly stored residual row.
template <class T>
void rms_norm_row(const T* x, const T* weight, float eps, std::int64_t n, T* out) {
  const float sum_sq = detail::cascade_sum(n, [x](std::int64_t i) {
    const float v = to_float(x[i]);
    return v * v;
  });
  const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
  if (weight == nullptr) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = from_float<T>(to_float(x[i]) * inv_rms);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    out[i] = from_float<T>(to_float(x[i]) * inv_rms * to_float(weight[i]));
  }
}

std::int64_t row_count(const Tensor& x, std::int64_t n) { return n == 0 ? 0 : x.numel() / n; }

}  // namespace

void rms_norm_rowwise(const Tensor& x, const Tensor* weight, double eps, std::int64_t n,
                      Tensor& out) {
  const std::int64_t rows = row_count(x, n);
  if (rows == 0) return;
  detail::dispatch_float(x.dtype(), "rms_norm_rowwise(cpu)", "x",
                         [&]<class T>(std::type_identity<T>) {
                           const T* xs = x.data<const T>();
                           const T* ws = weight != nullptr ? weight->data<const T>() : nullptr;
                           T* os = out.data<T>();
                           const auto eps_f = static_cast<float>(eps);
                           detail::parallel_for(rows, 3 * n, [&](std::int64_t r) {
                             rms_norm_row(xs + r * n, ws, eps_f, n, os + r * n);
                           });
                         });
}

void fused_add_rms_norm(const Tensor& x, Tensor& residual, const Tensor& weight, double eps,
                        std::int64_t n, Tensor& out) {
  const std::int64_t rows = row_count(x, n);
  if (rows == 0) return;
  detail::dispatch_float(
      x.dtype(), "fused_add_rms_norm(cpu)", "x", [&]<class T>(std::type_identity<T>) {
        const T* xs = x.data<const T>();
        T* rs = residual.data<T>();
        const T* ws = weight.data<const T>();
        T* os = out.data<T>();
        const auto eps_f = static_cast<float>(eps);
        detail::parallel_for(rows, 4 * n, [&](std::int64_t r) {
          T* res_row = rs + r * n;
          const T* x_row = xs + r * n;
          // The sum is rounded to T before the norm reads it back: the stored residual is what the
          // next layer sees, and the output must be consistent with it.
          for (std::int64_t i = 0; i < n; ++i) {
            res_row[i] = from_float<T>(to_float(x_row[i]) + to_float(res_row[i]));
          }
          rms_norm_row(res_row, ws, eps_f, n, os + r * n);
        });
      });
}

}  // namespace tileops::kernels::cpu
