// GEMM and batched GEMM on the CPU: each product is one cblas_sgemm (sgemm.hpp).
#include "kernels/gemm/cpu/gemm_cpu.hpp"

#include "kernels/gemm/cpu/sgemm.hpp"

namespace tileops::kernels::cpu {

using detail::FloatMatrix;
using detail::FloatResult;
using detail::MatrixLayout;

void gemm(const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& out) {
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (m == 0 || n == 0) return;
  std::vector<float> a_buffer, b_buffer, bias_buffer;
  const FloatMatrix a_float = detail::float_matrix(a, 0, m, k, detail::layout_of(a), a_buffer);
  const FloatMatrix b_float = detail::float_matrix(b, 0, k, n, detail::layout_of(b), b_buffer);
  FloatResult result(out);
  detail::sgemm(m, n, k, a_float, b_float,
                bias ? detail::float_vector(*bias, bias_buffer) : nullptr, result.data(), n);
  result.round_into(0, m * n);
}

void bmm(const Tensor& a, const Tensor& b, Tensor& out) {
  const std::int64_t batch = out.shape()[0], m = out.shape()[1], n = out.shape()[2];
  const std::int64_t k = a.shape()[2];
  if (batch == 0 || m == 0 || n == 0) return;
  MatrixLayout a_layout = detail::layout_of(a);
  const MatrixLayout b_layout = detail::layout_of(b);
  // One weight for a batch of row-major matrices that lie one after another is one product of
  // batch * M rows (out is contiguous, so its rows follow in the same order).
  std::int64_t rows = m, products = batch;
  if ((batch == 1 || b_layout.batch_stride == 0) && !a_layout.column_major &&
      (batch == 1 || a_layout.batch_stride == m * a_layout.ld)) {
    rows = batch * m;
    products = 1;
  }
  std::vector<float> a_buffer, b_buffer;
  FloatResult result(out);
  FloatMatrix a_float, b_float;
  for (std::int64_t l = 0; l < products; ++l) {
    // A broadcast operand (batch stride 0) is converted once.
    if (l == 0 || a_layout.batch_stride != 0)
      a_float = detail::float_matrix(a, l * a_layout.batch_stride, rows, k, a_layout, a_buffer);
    if (l == 0 || b_layout.batch_stride != 0)
      b_float = detail::float_matrix(b, l * b_layout.batch_stride, k, n, b_layout, b_buffer);
    detail::sgemm(rows, n, k, a_float, b_float, nullptr, result.data() + l * m * n, n);
  }
  result.round_into(0, batch * m * n);
}

}  // namespace tileops::kernels::cpu
