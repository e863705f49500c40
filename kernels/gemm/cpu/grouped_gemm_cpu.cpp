// Grouped GEMM on the CPU (the MoE expert layout of manifest/gemm.yaml): one cblas_sgemm per
// non-empty group, after the group ends are checked.
#include <algorithm>
#include <vector>

#include "kernels/gemm/cpu/gemm_cpu.hpp"
#include "kernels/gemm/cpu/sgemm.hpp"
#include "kernels/gemm/grouped_gemm_messages.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cpu {
namespace {

// The group ends, checked against the manifest's contract. The CPU reads them before writing, so a
// bad one raises instead of being clamped as a CUDA kernel clamps it.
std::vector<std::int64_t> checked_ends(const Tensor& offsets, std::int64_t rows) {
  const auto* raw = offsets.data<const std::int32_t>();
  std::vector<std::int64_t> ends(static_cast<std::size_t>(offsets.numel()));
  for (std::size_t g = 0; g < ends.size(); ++g) {
    ends[g] = raw[g];
    if (ends[g] < 0 || ends[g] > rows || (g > 0 && ends[g] < ends[g - 1]))
      throw CheckError(bad_offset_message(static_cast<std::int64_t>(g), ends[g], rows));
  }
  return ends;
}

}  // namespace

void grouped_gemm(const Tensor& x, const Tensor& w, const Tensor& offsets, Tensor& out) {
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = w.shape()[2];
  const std::vector<std::int64_t> ends = checked_ends(offsets, m);
  if (m == 0 || n == 0) return;
  const detail::MatrixLayout x_layout{false, std::max<std::int64_t>(k, 1), 0};
  const detail::MatrixLayout w_layout = detail::layout_of(w);
  std::vector<float> x_buffer, w_buffer;
  const detail::FloatMatrix x_float = detail::float_matrix(x, 0, m, k, x_layout, x_buffer);
  detail::FloatResult result(out);
  std::int64_t begin = 0;
  for (std::size_t g = 0; g < ends.size(); ++g) {
    const std::int64_t rows = ends[g] - begin;
    if (rows > 0) {
      const detail::FloatMatrix w_float = detail::float_matrix(
          w, static_cast<std::int64_t>(g) * w_layout.batch_stride, k, n, w_layout, w_buffer);
      const detail::FloatMatrix group{x_float.data + begin * x_float.ld, false, x_float.ld};
      detail::sgemm(rows, n, k, group, w_float, nullptr, result.data() + begin * n, n);
    }
    begin = ends[g];
  }
  // Rows that no group holds.
  std::fill(result.data() + begin * n, result.data() + m * n, 0.0f);
  result.round_into(0, m * n);
}

}  // namespace tileops::kernels::cpu
