// The gemm family's kernel interfaces and call specs: the contract between the gemm ops and their
// kernels (docs/gemm.md).
//
// Operands reach a kernel as views, never copied when their layout serves: a matrix operand is
// row-major (its last stride 1) or column-major (its second-to-last stride 1) with a leading
// dimension of at least its minor extent (Note [GEMM operand layouts] in
// src/ops/gemm/gemm_layout.hpp). `out` is contiguous and has the output's shape and dtype.
#pragma once

#include <cstdint>
#include <limits>
#include <tuple>

#include "tileops/core/tensor.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// Note [GEMM shape classes]
// A GEMM kernel is chosen and tuned for the problem's shape: the tile shape that wins at M = 1 is
// the wrong one at M = 8192. N and K key the call spec exactly (a model has a handful of weight
// shapes, and they decide tiling and split-K); M, which varies with every batch a server forms,
// keys it as a class: the power of two at or above it (1, 2, 4, ..., capped at 2^14), so serving
// every M builds at most 15 entries per weight shape. A batch count keys bmm the same way. What a
// refusal reads (dtype, layouts, the alignment of every pointer and leading dimension) keys it
// exactly, as the other families' call specs do.
inline std::int64_t gemm_size_class(std::int64_t size) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 14;
  if (size <= 0) return 0;
  std::int64_t size_class = 1;
  while (size_class < size && size_class < kLargest) size_class <<= 1;
  return size_class;
}

// Whether a size fits the int that cuBLAS's and CUTLASS's problem shapes count in; a candidate
// whose API counts in int refuses (or splits) a size past it rather than let it wrap.
inline bool fits_int(std::int64_t value) { return value <= std::numeric_limits<int>::max(); }

// One matrix product out = a @ b (+ bias) of `dtype`, or a batch of them.
struct GemmCall : CallSpecOf<GemmCall> {
  DType dtype = DType::kFloat32;
  // How each operand's matrices lie: row-major, or column-major (the transposed view of a
  // row-major matrix, as b = W.t() of an nn.Linear weight W).
  bool a_column_major = false;
  bool b_column_major = false;
  bool has_bias = false;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t m_class = 0;        // gemm_size_class(M), 0 for M = 0
  std::int64_t batch_class = 1;    // gemm_size_class(batch) of a bmm; 1 for a gemm
  bool a_batch_broadcast = false;  // bmm: a's matrices are one matrix (batch stride 0)
  bool b_batch_broadcast = false;  // bmm: b's matrices are one matrix (batch stride 0)
  AccessClass access;              // pointers, leading dimensions and batch strides, in bytes

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("a_column_major", a_column_major),
                      field("b_column_major", b_column_major), field("has_bias", has_bias),
                      field("n", n), field("k", k), field("m_class", m_class),
                      field("batch_class", batch_class),
                      field("a_batch_broadcast", a_batch_broadcast),
                      field("b_batch_broadcast", b_batch_broadcast), field("access", access));
  }
};

class GemmFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "gemm";
  using Call = GemmCall;
  // out [M, N] = a [M, K] @ b [K, N] (+ bias [N]); a and b are 2-D views of the layouts the call
  // spec names, bias is contiguous.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                       const Tensor* bias, Tensor& out) = 0;
};

class BmmFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "bmm";
  using Call = GemmCall;
  // out [L, M, N] = a [L, M, K] @ b [L, K, N], L the broadcast batch; a and b are 3-D views whose
  // batch stride is 0 where the call spec says the operand broadcasts, and whose matrices have the
  // layouts it names.
  virtual void forward(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) = 0;
};

// One grouped product: the number of groups, the weight's layout and the weight shape key it; the
// number of rows and how they fall into groups (device data) do not.
struct GroupedGemmCall : CallSpecOf<GroupedGemmCall> {
  DType dtype = DType::kBFloat16;
  bool w_column_major = false;  // each [K, N] matrix of w: the transposed view of a [N, K] one
  std::int64_t groups = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  AccessClass access;

  auto fields() const {
    return std::tuple(field("dtype", dtype), field("w_column_major", w_column_major),
                      field("groups", groups), field("n", n), field("k", k),
                      field("access", access));
  }
};

class GroupedGemmFwdInterface : public KernelInterface {
 public:
  static constexpr std::string_view kName = "grouped_gemm";
  using Call = GroupedGemmCall;
  // out [M, N]: rows of group g = x rows @ w[g] (manifest/gemm.yaml); x is contiguous, w a 3-D view
  // whose matrices have the call spec's layout and whose expert stride is its own, offsets [E]
  // int32 contiguous on the call's device.
  virtual void forward(const KernelContext& ctx, const Tensor& x, const Tensor& w,
                       const Tensor& offsets, Tensor& out) = 0;
};

}  // namespace tileops::kernels
