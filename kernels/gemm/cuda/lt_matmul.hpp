// LtMatmul: one cuBLASLt matrix product per gemm call spec (docs/gemm.md, cuBLASLt and Tuning),
// behind a header free of CUDA so that the adapters and the implementation table include it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/gemm/interface.hpp"
#include "tileops/op/kernel.hpp"

namespace tileops::kernels::cuda {

// How one operand lies: its matrices are row-major (or column-major) with leading dimension `ld`,
// `batch_stride` elements apart (0: one matrix serves the whole batch).
struct LtOperand {
  const void* data = nullptr;
  bool column_major = false;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

// The most matrices an LtProblem's batch holds. cuBLASLt's batch count is an int32, but a batch of
// 2^31 - 1 [1, 1] products failed inside it on the H200 (CUBLAS_STATUS_INTERNAL_ERROR,
// CudaBmm.BatchPast32BitIndexing...); 65535, the grid's third dimension, is a count it serves.
inline constexpr std::int64_t kMaxLtBatch = 65535;

// out [batch, m, n] (contiguous) = a [batch, m, k] @ b [batch, k, n] (+ bias [n]); n and k are the
// call spec's; batch is at most kMaxLtBatch.
struct LtProblem {
  std::int64_t m = 0;
  std::int64_t batch = 1;
  LtOperand a, b;
  const void* bias = nullptr;
  void* out = nullptr;
};

class LtMatmul {
 public:
  // Built on the call spec's device (current while the framework builds the entry). Reads the
  // tuning store for a choice recorded under (`implementation_key`, the call spec, the device).
  LtMatmul(const GemmCall& call, std::string implementation_key);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Why cuBLASLt cannot serve `call` (its dtype, or no algorithm for its alignment); nullopt when
  // it can. Asks the heuristic once per call spec, on the current device.
  static std::optional<std::string> refusal(const GemmCall& call);

  // Enqueues the product on ctx.stream; `tune`: time the candidates first unless already tuned or
  // the stream is capturing a graph (Note [Tuning a cuBLASLt entry] in lt_matmul.cpp).
  void run(const KernelContext& ctx, const LtProblem& problem, bool tune);

  // The algorithm of the last call: "cublaslt algo 21 tile 18 stages 4 splitk 1 cluster 2 (tuned
  // 12.3 us)", or "(heuristic)", or "cublas gemmex (tuned 15.8 us)" when the classic cuBLAS API
  // won tuning; empty before the first call.
  std::string detail() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tileops::kernels::cuda
