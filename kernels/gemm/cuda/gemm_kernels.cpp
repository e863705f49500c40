// The forward of the cuBLASLt implementations (gemm_kernels.hpp): operand views to an LtProblem,
// the shapes cuBLASLt does not take (K = 0, empty outputs) and the batch that folds into one GEMM.
#include "kernels/gemm/cuda/gemm_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda/runtime.hpp"
#include "kernels/gemm/cuda/empty_product.hpp"

namespace tileops::kernels::cuda {
namespace {

void write_empty_product(const KernelContext& ctx, const Tensor* bias, Tensor& out,
                         std::int64_t n) {
  launch_empty_product(out.data_ptr(), bias ? bias->data_ptr() : nullptr, n, out.numel(),
                       out.itemsize(), tileops::cuda::native_stream(ctx.stream));
}

// An operand view [R, C] or [L, R, C] as LtMatmul reads it (Note [GEMM operand layouts] in
// src/ops/gemm/gemm_layout.hpp: the kernel's views are row-major or column-major).
LtOperand lt_operand(const Tensor& t, bool column_major) {
  const Shape& s = t.strides();
  const std::size_t r = s.size();
  LtOperand o;
  o.data = t.data_ptr();
  o.column_major = column_major;
  o.ld = column_major ? s[r - 1] : s[r - 2];
  o.batch_stride = r == 3 ? s[0] : 0;
  return o;
}

// `base` moved on by `elements` elements of `itemsize` bytes.
const void* advanced(const void* base, std::int64_t elements, std::size_t itemsize) {
  return static_cast<const std::byte*>(base) + elements * static_cast<std::int64_t>(itemsize);
}

}  // namespace

void GemmCublasLtSm90::forward(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                               const Tensor* bias, Tensor& out) {
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (m == 0 || n == 0) return;
  if (k == 0) return write_empty_product(ctx, bias, out, n);
  LtProblem p;
  p.m = m;
  p.a = lt_operand(a, call_.a_column_major);
  p.b = lt_operand(b, call_.b_column_major);
  p.bias = bias ? bias->data_ptr() : nullptr;
  p.out = out.data_ptr();
  matmul_.run(ctx, p, tune_requested());
}

// Note [Folding a broadcast weight]
// When every matrix of the batch multiplies one b and a's matrices lie one after another as a
// single row-major block ([L * M, K], ld = K, batch stride M * K), the batch is one GEMM of L * M
// rows: one launch with a larger M, which also picks the M class's better tiles.
void BmmCublasLtSm90::forward(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                              Tensor& out) {
  const std::int64_t batch = out.shape()[0], m = out.shape()[1], n = out.shape()[2];
  const std::int64_t k = a.shape()[2];
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) return write_empty_product(ctx, nullptr, out, n);
  LtProblem p;
  p.m = m;
  p.batch = batch;
  p.a = lt_operand(a, call_.a_column_major);
  p.b = lt_operand(b, call_.b_column_major);
  p.out = out.data_ptr();
  const bool folds = batch > 1 && p.b.batch_stride == 0 && !p.a.column_major && p.a.ld == k &&
                     p.a.batch_stride == m * k;
  if (batch == 1 || folds) {
    p.m = m * batch;
    p.batch = 1;
    p.a.batch_stride = 0;
    p.b.batch_stride = 0;
  }
  // cuBLASLt counts a strided batch in int32 and fails inside on the longest (lt_matmul.hpp): a
  // longer batch than kMaxLtBatch runs as pieces of that many matrices, one after another.
  const std::int64_t whole = p.batch;
  for (std::int64_t first = 0; first < whole; first += kMaxLtBatch) {
    LtProblem piece = p;
    piece.batch = std::min(kMaxLtBatch, whole - first);
    piece.a.data = advanced(p.a.data, first * p.a.batch_stride, a.itemsize());
    piece.b.data = advanced(p.b.data, first * p.b.batch_stride, b.itemsize());
    piece.out = static_cast<std::byte*>(p.out) + first * m * n * out.itemsize();
    matmul_.run(ctx, piece, tune_requested());
  }
}

}  // namespace tileops::kernels::cuda
