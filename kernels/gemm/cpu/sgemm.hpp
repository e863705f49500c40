// What the gemm family's CPU kernels share: operands as float32 matrices in the layouts OpenBLAS's
// cblas_sgemm reads, and the one product every kernel reduces to. Internal to kernels/gemm/cpu.
#pragma once

#include <cstdint>
#include <vector>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu::detail {

// How a 2-D or 3-D operand view lies (Note [GEMM operand layouts] in src/ops/gemm/gemm_layout.hpp):
// row-major (strides ld, 1) or column-major (strides 1, ld), and for [L, R, C] the stride between
// its matrices (0: one matrix for the whole batch).
struct MatrixLayout {
  bool column_major = false;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};
MatrixLayout layout_of(const Tensor& view);

// A [rows, cols] float32 matrix as cblas_sgemm reads it.
struct FloatMatrix {
  const float* data = nullptr;
  bool column_major = false;
  std::int64_t ld = 0;
};

// The matrix at element `offset` of `view` ([rows, cols] with `layout`), as float32: in place for
// float32, else converted into `buffer` (dense, same layout), so that the product multiplies and
// accumulates in float32 whatever T is.
FloatMatrix float_matrix(const Tensor& view, std::int64_t offset, std::int64_t rows,
                         std::int64_t cols, const MatrixLayout& layout, std::vector<float>& buffer);

// c [m, n] (row-major, ldc) = a [m, k] @ b [k, n] (+ bias [n]), in float32. k = 0 gives the bias
// or zeros; m = 0 or n = 0 writes nothing.
void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const FloatMatrix& a,
           const FloatMatrix& b, const float* bias, float* c, std::int64_t ldc);

// Where a product of `out`'s dtype writes its float32 result: `out`'s own memory for float32 (with
// `out` contiguous), else a scratch buffer that round_into() then rounds to T once.
class FloatResult {
 public:
  explicit FloatResult(Tensor& out);
  float* data() { return data_; }
  // Rounds elements [begin, end) of the float32 result into `out` (a no-op for float32).
  void round_into(std::int64_t begin, std::int64_t end);

 private:
  Tensor& out_;
  std::vector<float> scratch_;
  float* data_ = nullptr;
};

// `bias` (contiguous, [n]) as float32: in place for float32, else converted into `buffer`.
const float* float_vector(const Tensor& bias, std::vector<float>& buffer);

}  // namespace tileops::kernels::cpu::detail
