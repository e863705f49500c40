// The float32 product of the gemm family's CPU kernels: OpenBLAS's cblas_sgemm (docs/gemm.md), with
// the float16/bfloat16 operands converted to float32 first and the result rounded to T once.
#include "kernels/gemm/cpu/sgemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <string>

#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cpu::detail {
namespace {

// cblas takes its sizes as int (Debian's OpenBLAS: 32-bit integers).
int blas_int(std::int64_t value, const char* what) {
  if (value > INT_MAX)
    throw CheckError(std::string("gemm_cpu: ") + what + " = " + std::to_string(value) +
                     " is past OpenBLAS's 32-bit sizes");
  return static_cast<int>(value);
}

template <class T>
void convert(const T* source, std::int64_t outer, std::int64_t inner, std::int64_t ld,
             float* dense) {
  parallel_for(outer, inner, [&](std::int64_t i) {
    const T* row = source + i * ld;
    float* to = dense + i * inner;
    for (std::int64_t j = 0; j < inner; ++j) to[j] = to_float(row[j]);
  });
}

}  // namespace

MatrixLayout layout_of(const Tensor& view) {
  const std::size_t rank = view.dim();
  const bool column_major = view.strides()[rank - 1] != 1;
  return {column_major, column_major ? view.strides()[rank - 1] : view.strides()[rank - 2],
          rank == 3 ? view.strides()[0] : 0};
}

FloatMatrix float_matrix(const Tensor& view, std::int64_t offset, std::int64_t rows,
                         std::int64_t cols, const MatrixLayout& layout,
                         std::vector<float>& buffer) {
  FloatMatrix matrix{nullptr, layout.column_major, layout.ld};
  dispatch_float(view.dtype(), "gemm_cpu", "operand", [&]<class T>(std::type_identity<T>) {
    const T* first = view.data<const T>() + offset;
    if constexpr (std::is_same_v<T, float>) {
      matrix.data = first;
    } else {
      // Dense in the same layout: `outer` lines of `inner` elements, ld apart in the view.
      const std::int64_t outer = layout.column_major ? cols : rows;
      const std::int64_t inner = layout.column_major ? rows : cols;
      buffer.resize(static_cast<std::size_t>(outer * inner));
      convert(first, outer, inner, layout.ld, buffer.data());
      matrix.data = buffer.data();
      matrix.ld = std::max<std::int64_t>(inner, 1);
    }
  });
  return matrix;
}

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const FloatMatrix& a,
           const FloatMatrix& b, const float* bias, float* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  // The bias is the accumulator's start (beta = 1), so it is added in float32 before T rounding.
  for (std::int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (bias)
      std::copy(bias, bias + n, row);
    else
      std::fill(row, row + n, 0.0f);
  }
  if (k == 0) return;
  cblas_sgemm(CblasRowMajor, a.column_major ? CblasTrans : CblasNoTrans,
              b.column_major ? CblasTrans : CblasNoTrans, blas_int(m, "M"), blas_int(n, "N"),
              blas_int(k, "K"), 1.0f, a.data, blas_int(a.ld, "a's leading dimension"), b.data,
              blas_int(b.ld, "b's leading dimension"), 1.0f, c, blas_int(ldc, "N"));
}

FloatResult::FloatResult(Tensor& out) : out_(out) {
  if (out.dtype() == DType::kFloat32) {
    data_ = out.data<float>();
  } else {
    scratch_.resize(static_cast<std::size_t>(out.numel()));
    data_ = scratch_.data();
  }
}

void FloatResult::round_into(std::int64_t begin, std::int64_t end) {
  dispatch_float(out_.dtype(), "gemm_cpu", "out", [&]<class T>(std::type_identity<T>) {
    if constexpr (!std::is_same_v<T, float>) {
      T* to = out_.data<T>();
      parallel_for(end - begin, 1,
                   [&](std::int64_t i) { to[begin + i] = from_float<T>(data_[begin + i]); });
    }
  });
}

const float* float_vector(const Tensor& bias, std::vector<float>& buffer) {
  const float* values = nullptr;
  dispatch_float(bias.dtype(), "gemm_cpu", "bias", [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, float>) {
      values = bias.data<const float>();
    } else {
      buffer.resize(static_cast<std::size_t>(bias.numel()));
      convert(bias.data<const T>(), 1, bias.numel(), bias.numel(), buffer.data());
      values = buffer.data();
    }
  });
  return values;
}

}  // namespace tileops::kernels::cpu::detail
