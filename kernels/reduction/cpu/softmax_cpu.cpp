// softmax along any axis. x is viewed as [outer, length, inner]: with inner == 1 (the last axis)
// each row is contiguous; otherwise a task takes a strip of up to kColumns adjacent inner
// columns and walks the reduced axis with a stride of `inner`, keeping one running max and sum
// per column, so every memory access stays sequential within the strip.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

inline constexpr std::int64_t kColumns = 64;
inline constexpr std::int64_t kBlockElements = std::int64_t{1} << 16;
// Rough cost of one element (max, exp, sum, divide) against the parallel threshold.
inline constexpr std::int64_t kCostPerElement = 8;

// One contiguous row; `scratch` holds length floats (the exponentials, computed once).
template <class T>
void softmax_row(const T* x, std::int64_t length, float* scratch, T* out) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < length; ++i) max = std::max(max, to_float(x[i]));
  float sum = 0.0f;
  for (std::int64_t i = 0; i < length; ++i) {
    scratch[i] = std::exp(to_float(x[i]) - max);
    sum += scratch[i];
  }
  for (std::int64_t i = 0; i < length; ++i) out[i] = from_float<T>(scratch[i] / sum);
}

// Columns [0, width) of a strip starting at x (stride `inner` between steps of the axis).
template <class T>
void softmax_strip(const T* x, std::int64_t length, std::int64_t inner, std::int64_t width,
                   T* out) {
  std::array<float, kColumns> max;
  std::array<float, kColumns> sum{};
  max.fill(-std::numeric_limits<float>::infinity());
  for (std::int64_t d = 0; d < length; ++d) {
    const T* step = x + d * inner;
    for (std::int64_t c = 0; c < width; ++c) max[c] = std::max(max[c], to_float(step[c]));
  }
  for (std::int64_t d = 0; d < length; ++d) {
    const T* step = x + d * inner;
    for (std::int64_t c = 0; c < width; ++c) sum[c] += std::exp(to_float(step[c]) - max[c]);
  }
  // Recomputing the exponentials costs less than a [length, kColumns] scratch buffer that would
  // fall out of cache for long axes.
  for (std::int64_t d = 0; d < length; ++d) {
    const T* step = x + d * inner;
    T* out_step = out + d * inner;
    for (std::int64_t c = 0; c < width; ++c) {
      out_step[c] = from_float<T>(std::exp(to_float(step[c]) - max[c]) / sum[c]);
    }
  }
}

}  // namespace

void softmax(const Tensor& x, std::int64_t dim, Tensor& out) {
  if (x.numel() == 0) return;
  const Shape& shape = x.shape();
  const auto axis = static_cast<std::size_t>(dim);
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  for (std::size_t a = 0; a < axis; ++a) outer *= shape[a];
  for (std::size_t a = axis + 1; a < shape.size(); ++a) inner *= shape[a];
  const std::int64_t length = shape[axis];
  detail::dispatch_float(x.dtype(), "softmax(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    const T* xs = x.data<const T>();
    T* os = out.data<T>();
    if (inner == 1) {
      const std::int64_t rows_per_block = std::max<std::int64_t>(1, kBlockElements / length);
      const std::int64_t blocks = (outer + rows_per_block - 1) / rows_per_block;
      detail::parallel_for(blocks, kCostPerElement * length * rows_per_block, [&](std::int64_t b) {
        std::vector<float> scratch(static_cast<std::size_t>(length));
        const std::int64_t end = std::min(outer, (b + 1) * rows_per_block);
        for (std::int64_t r = b * rows_per_block; r < end; ++r) {
          softmax_row(xs + r * length, length, scratch.data(), os + r * length);
        }
      });
      return;
    }
    const std::int64_t strips = (inner + kColumns - 1) / kColumns;
    detail::parallel_for(outer * strips, kCostPerElement * length * kColumns, [&](std::int64_t t) {
      const std::int64_t o = t / strips;
      const std::int64_t c0 = (t % strips) * kColumns;
      const std::int64_t offset = o * length * inner + c0;
      softmax_strip(xs + offset, length, inner, std::min(kColumns, inner - c0), os + offset);
    });
  });
}

}  // namespace tileops::kernels::cpu
