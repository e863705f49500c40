// rms_norm_blocked: the long-row variant of rms_norm_rowwise.
//
// Note [Blocked RMSNorm]
// Widening float16/bfloat16 to float is a bit-manipulation routine per element, and a single
// float accumulator is a loop-carried dependency, so the row-wise kernel neither vectorises nor
// pipelines. Here each narrow row is widened once into a float scratch row (float rows are read
// in place). Pass 1 sums the squares of the float row with the CPU kernels' cascade (see
// Note [Cascade summation]): independent lanes, a layout the compiler vectorises without
// -ffast-math because the reassociation is written out, and blocks combined pairwise, so the sum
// stays accurate on long rows. Pass 2 scales the float row by the reciprocal root and by a float
// copy of the weight made once per call. Rows are handed out in blocks so that one scratch row
// serves several rows of a thread.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/norm/cpu/norm_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

// Elements per block of rows: enough work per task to amortise the scratch allocation.
inline constexpr std::int64_t kBlockElements = std::int64_t{1} << 16;

float sum_of_squares(const float* row, std::int64_t n) {
  return detail::cascade_sum(n, [row](std::int64_t i) { return row[i] * row[i]; });
}

template <class T>
void rms_norm_rows(const T* x, const float* weight, float eps, std::int64_t n,
                   std::int64_t first_row, std::int64_t end_row, T* out) {
  // float rows are read in place; narrow rows are widened once into the scratch row.
  constexpr bool kWiden = !std::is_same_v<T, float>;
  std::vector<float> scratch(kWiden ? static_cast<std::size_t>(n) : 0);
  for (std::int64_t r = first_row; r < end_row; ++r) {
    const T* x_row = x + r * n;
    const float* row = nullptr;
    if constexpr (kWiden) {
      for (std::int64_t i = 0; i < n; ++i) scratch[i] = to_float(x_row[i]);
      row = scratch.data();
    } else {
      row = x_row;
    }
    const float inv_rms = 1.0f / std::sqrt(sum_of_squares(row, n) / static_cast<float>(n) + eps);
    T* out_row = out + r * n;
    if (weight == nullptr) {
      for (std::int64_t i = 0; i < n; ++i) out_row[i] = from_float<T>(row[i] * inv_rms);
    } else {
      for (std::int64_t i = 0; i < n; ++i) {
        out_row[i] = from_float<T>(row[i] * inv_rms * weight[i]);
      }
    }
  }
}

}  // namespace

void rms_norm_blocked(const Tensor& x, const Tensor* weight, double eps, std::int64_t n,
                      Tensor& out) {
  const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
  if (rows == 0) return;
  detail::dispatch_float(
      x.dtype(), "rms_norm_blocked(cpu)", "x", [&]<class T>(std::type_identity<T>) {
        std::vector<float> weight_f;
        if (weight != nullptr) {
          const T* ws = weight->data<const T>();
          weight_f.resize(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i) weight_f[i] = to_float(ws[i]);
        }
        const float* wf = weight != nullptr ? weight_f.data() : nullptr;
        const T* xs = x.data<const T>();
        T* os = out.data<T>();
        const auto eps_f = static_cast<float>(eps);
        const std::int64_t rows_per_block = std::max<std::int64_t>(1, kBlockElements / n);
        const std::int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
        detail::parallel_for(blocks, 3 * n * rows_per_block, [&](std::int64_t b) {
          const std::int64_t first = b * rows_per_block;
          rms_norm_rows(xs, wf, eps_f, n, first, std::min(rows, first + rows_per_block), os);
        });
      });
}

}  // namespace tileops::kernels::cpu
