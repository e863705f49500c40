// alibi: one float slope per head, then a multiply per element.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/attention/cpu/attention_cpu.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"

namespace tileops::kernels::cpu {

float alibi_slope(std::int64_t num_heads, std::int64_t head) {
  // m is the largest power of two <= num_heads (num_heads > 0 is a manifest rule).
  const auto m = static_cast<double>(std::bit_floor(static_cast<std::uint64_t>(num_heads)));
  const auto h = static_cast<double>(head);
  const double exponent =
      head < static_cast<std::int64_t>(m) ? -8.0 * (h + 1.0) / m : -4.0 * (2.0 * (h - m) + 1.0) / m;
  return static_cast<float>(std::exp2(exponent));
}

void alibi(std::int64_t num_heads, std::int64_t seq_len, Tensor& out) {
  if (num_heads <= 0 || seq_len <= 0) return;
  detail::dispatch_float(out.dtype(), "alibi(cpu)", "out", [&]<class T>(std::type_identity<T>) {
    std::vector<float> slopes(static_cast<std::size_t>(num_heads));
    for (std::int64_t h = 0; h < num_heads; ++h) slopes[h] = alibi_slope(num_heads, h);
    T* os = out.data<T>();
    // One task per (head, query) row of seq_len keys.
    detail::parallel_for(num_heads * seq_len, seq_len, [&](std::int64_t row) {
      const float slope = slopes[row / seq_len];
      const std::int64_t i = row % seq_len;
      T* out_row = os + row * seq_len;
      for (std::int64_t j = 0; j < seq_len; ++j) {
        out_row[j] = detail::from_float<T>(slope * static_cast<float>(j - i));
      }
    });
  });
}

}  // namespace tileops::kernels::cpu
