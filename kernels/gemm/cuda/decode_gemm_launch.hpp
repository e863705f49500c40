// The decode GEMM candidates as the cuBLASLt entry sees them (no CUDA header): Note [Decode GEMM]
// in decode_gemm.cuh. Both element types and both shapes are instantiated in decode_gemm.cu.
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// out [M, N] (contiguous) = a [M, K] (row-major, ld lda) @ b [K, N] (+ bias [N]), b column-major:
// b[k][n] at b + n * ldb + k, the transposed view of an nn.Linear weight [N, K]. 0 < M <= 16;
// pointers 16-byte aligned, K, lda and ldb multiples of 8 elements.
struct DecodeGemmProblem {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;  // may be null
  void* out = nullptr;
  std::int64_t lda = 0, ldb = 0;
  int m = 0;
  std::int64_t n = 0, k = 0;
};

// The kernel's shapes offered to tuning: columns a block, steps of k each warp loads before it
// multiplies. The narrow one has twice the blocks (the card full at N = 4096); the wide one reads
// a's rows once for twice the columns (ahead at M = 16) and fits a wave where the narrow one spills
// into a second (N = 6144). bench/results/2026-12-03-h200-decode-gemm.md has the sweep.
enum class DecodeGemmShape { kNarrow, kWide };
inline constexpr DecodeGemmShape kDecodeGemmShapes[] = {DecodeGemmShape::kNarrow,
                                                        DecodeGemmShape::kWide};

// How the tuning store and the entry's detail name each shape.
inline const char* decode_gemm_name(DecodeGemmShape shape) {
  return shape == DecodeGemmShape::kNarrow ? "decode gemm 8 columns 4 deep"
                                           : "decode gemm 16 columns 2 deep";
}

// The largest M the kernel serves.
inline constexpr int kDecodeGemmMaxRows = 16;

// Enqueues the product on `stream` (a cudaStream_t of the current device) for float16 or
// bfloat16. Throws CudaError when the launch fails.
void launch_decode_gemm(DType dtype, DecodeGemmShape shape, const DecodeGemmProblem& p,
                        void* stream);

// The streamed decode kernel (Note [Streamed decode GEMM] in decode_stream.cuh) for one row, a
// candidate of its own: 16 warps a block in pairs, each pair with two 8 KB stages. It takes what
// the decode kernel takes with M = 1, where its shared memory (streamed_decode_shared_bytes: the
// stages, a's row where K is past a stage and the block's column sums) is within
// kStreamedDecodeMostShared.
inline constexpr const char* kStreamedDecodeGemmName = "streamed decode gemm 16 warps";
inline constexpr std::int64_t kStreamedDecodeMostShared = 227 * 1024;
std::int64_t streamed_decode_shared_bytes(std::int64_t n, std::int64_t k, int sm_count);

// Enqueues the streamed product on `stream` (of device `device`, current) for float16 or
// bfloat16, one block a multiprocessor (at most N). Throws CudaError when the launch fails.
void launch_streamed_decode_gemm(DType dtype, const DecodeGemmProblem& p, int device, int sm_count,
                                 void* stream);

}  // namespace tileops::kernels::cuda
