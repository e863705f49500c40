// softmax and log_softmax along any axis. x is viewed as [outer, length, inner]: with inner == 1
// (the last axis) each row is contiguous; otherwise a task takes a strip of up to kColumns
// adjacent inner columns and walks the reduced axis with a stride of `inner`, keeping one running
// max and one cascaded sum per column, so every memory access stays sequential within the strip.
// The sums of exponentials are cascades (Note [Cascade summation]), accurate on rows as long as a
// vocabulary.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

inline constexpr std::int64_t kColumns = 64;
// Steps of the reduced axis per block of a strip's sums.
inline constexpr std::int64_t kStepsPerBlock = 32;
inline constexpr std::int64_t kBlockElements = std::int64_t{1} << 16;
// Rough cost of one element (max, exp, sum, divide) against the parallel threshold.
inline constexpr std::int64_t kCostPerElement = 8;

// One contiguous row; `scratch` holds length floats (softmax keeps the exponentials, computed
// once; log_softmax needs only their sum).
template <bool kLog, class T>
void normalize_row(const T* x, std::int64_t length, float* scratch, T* out) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < length; ++i) max = std::max(max, to_float(x[i]));
  if constexpr (kLog) {
    const float log_sum = std::log(detail::cascade_sum(
        length, [x, max](std::int64_t i) { return std::exp(to_float(x[i]) - max); }));
    for (std::int64_t i = 0; i < length; ++i)
      out[i] = from_float<T>(to_float(x[i]) - max - log_sum);
  } else {
    const float sum = detail::cascade_sum(length, [x, max, scratch](std::int64_t i) {
      scratch[i] = std::exp(to_float(x[i]) - max);
      return scratch[i];
    });
    for (std::int64_t i = 0; i < length; ++i) out[i] = from_float<T>(scratch[i] / sum);
  }
}

// Columns [0, width) of a strip starting at x (stride `inner` between steps of the axis).
template <bool kLog, class T>
void normalize_strip(const T* x, std::int64_t length, std::int64_t inner, std::int64_t width,
                     T* out) {
  std::array<float, kColumns> max;
  max.fill(-std::numeric_limits<float>::infinity());
  for (std::int64_t d = 0; d < length; ++d) {
    const T* step = x + d * inner;
    for (std::int64_t c = 0; c < width; ++c) max[c] = std::max(max[c], to_float(step[c]));
  }
  const std::int64_t blocks = (length + kStepsPerBlock - 1) / kStepsPerBlock;
  detail::ColumnCombiner<detail::FloatSum> sums(width, static_cast<std::uint64_t>(blocks));
  std::array<float, kColumns> block;
  for (std::int64_t first = 0; first < length; first += kStepsPerBlock) {
    block.fill(0.0f);
    for (std::int64_t d = first; d < std::min(length, first + kStepsPerBlock); ++d) {
      const T* step = x + d * inner;
      for (std::int64_t c = 0; c < width; ++c) block[c] += std::exp(to_float(step[c]) - max[c]);
    }
    sums.push(block.data());
  }
  std::array<float, kColumns> sum;
  sums.total(sum.data());
  if constexpr (kLog) {
    for (std::int64_t c = 0; c < width; ++c) sum[c] = std::log(sum[c]);
  }
  // Recomputing the exponentials costs less than a [length, kColumns] scratch buffer that would
  // fall out of cache for long axes.
  for (std::int64_t d = 0; d < length; ++d) {
    const T* step = x + d * inner;
    T* out_step = out + d * inner;
    for (std::int64_t c = 0; c < width; ++c) {
      const float shifted = to_float(step[c]) - max[c];
      out_step[c] = from_float<T>(kLog ? shifted - sum[c] : std::exp(shifted) / sum[c]);
    }
  }
}

template <bool kLog>
void normalize(const Tensor& x, std::int64_t dim, Tensor& out, const char* kernel) {
  if (x.numel() == 0) return;
  const Shape& shape = x.shape();
  const auto axis = static_cast<std::size_t>(dim);
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  for (std::size_t a = 0; a < axis; ++a) outer *= shape[a];
  for (std::size_t a = axis + 1; a < shape.size(); ++a) inner *= shape[a];
  const std::int64_t length = shape[axis];
  detail::dispatch_float(x.dtype(), kernel, "x", [&]<class T>(std::type_identity<T>) {
    const T* xs = x.data<const T>();
    T* os = out.data<T>();
    if (inner == 1) {
      const std::int64_t rows_per_block = std::max<std::int64_t>(1, kBlockElements / length);
      const std::int64_t blocks = (outer + rows_per_block - 1) / rows_per_block;
      detail::parallel_for(blocks, kCostPerElement * length * rows_per_block, [&](std::int64_t b) {
        std::vector<float> scratch(kLog ? 0 : static_cast<std::size_t>(length));
        const std::int64_t end = std::min(outer, (b + 1) * rows_per_block);
        for (std::int64_t r = b * rows_per_block; r < end; ++r) {
          normalize_row<kLog>(xs + r * length, length, scratch.data(), os + r * length);
        }
      });
      return;
    }
    const std::int64_t strips = (inner + kColumns - 1) / kColumns;
    detail::parallel_for(outer * strips, kCostPerElement * length * kColumns, [&](std::int64_t t) {
      const std::int64_t o = t / strips;
      const std::int64_t c0 = (t % strips) * kColumns;
      const std::int64_t offset = o * length * inner + c0;
      normalize_strip<kLog>(xs + offset, length, inner, std::min(kColumns, inner - c0),
                            os + offset);
    });
  });
}

}  // namespace

void softmax(const Tensor& x, std::int64_t dim, Tensor& out) {
  normalize<false>(x, dim, out, "softmax(cpu)");
}

void log_softmax(const Tensor& x, std::int64_t dim, Tensor& out) {
  normalize<true>(x, dim, out, "log_softmax(cpu)");
}

}  // namespace tileops::kernels::cpu
