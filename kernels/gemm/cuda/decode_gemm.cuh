// The decode GEMM: GemmFwdOp's products of a few rows (M <= 16) with a column-major weight, the
// weight streamed once at HBM's bandwidth. Framework-free (plain pointers and sizes): launched by
// decode_gemm.cu for the cuBLASLt entry (decode_gemm_launch.hpp, DecodeGemmProblem) and swept by
// bench/experiments/decode_gemm.cu.
//
// Note [Decode GEMM]
// With a handful of rows, out = a @ b is a read of the weight b: K x N elements once, 2 x M flops
// each, so the time is the weight's bytes over HBM's bandwidth plus one wave's ramp and tail. What
// that needs is every SM holding many loads in flight from the first cycle to the last, and
// nothing else on the way; cuBLAS's decode kernels stream the small weights of Llama-3-8B at
// 2.4-3.2 TB/s (bench/results/2026-12-02-h200-gemm-tuning.md).
//
//   - A block owns 8 x kTiles columns and the whole K. Its 8 warps split K: warp w takes the steps
//     w, w + 8, w + 16, ... of 32 k each, so the block reads every column as one run and the card
//     has N / (8 kTiles) blocks, enough for the 132 SMs at N = 4096.
//   - In a step, lane (g, q) = (lane / 4, lane % 4) loads 16 bytes of each of its tiles' columns:
//     column 8j + g, k [32s + 8q, +8) — a column-major b is the transposed view of an nn.Linear
//     weight [N, K], whose rows are contiguous in k. kUnroll steps are loaded before any is
//     multiplied, so each lane has kUnroll x kTiles loads in flight.
//   - The products are mma.sync m16n8k16 with float32 accumulation, a's rows padded to 16 with
//     zeros (the tensor cores have time to spare: 2 x 16 flops a weight byte at 4 TB/s is 64
//     TFLOP/s). A dot product does not depend on the order of its terms, so the instruction's k
//     slots are mapped onto k as the loads lie: slots 2q + {0, 1} and 2q + 8 + {0, 1} of the
//     step's first instruction are k 8q + {0, 1} and 8q + {2, 3}, of its second 8q + {4, 5} and
//     8q + {6, 7}. Then each 16-byte vector of b is two ready fragment registers for each of the
//     two instructions, and a's fragments are the 16-byte vectors a[g][32s + 8q, +8) and
//     a[g + 8][...], read through L1 (every block reads all of a). Rows past M and columns past N
//     read the last ones again, so that no load needs a predicate, and are never stored; a product
//     of at most 8 rows skips the upper eight altogether. Only the last few steps, where k may run
//     past K, are loaded one at a time with predicates.
//   - The warps' sums meet in shared memory; one pass adds them, adds the bias in float32 and
//     rounds once.
//   - Launched as a dependent kernel (Note [Dependent launch] in src/cuda/dependent_launch.hpp),
//     its blocks are placed while the previous kernel of the stream drains; before the wait
//     (Note [Prefetch before the wait]) each asks L2 for the first kPrefetchBytes of each of its
//     columns, so that DRAM streams the weight through the previous kernel's tail and the launch
//     gap — a model's previous kernel does not write the weight, and a prefetch is correct even if
//     it did. 4 KB a column is about 16 MB for the blocks of one wave: the bytes the tail and the
//     gap, 2-3 us, leave DRAM idle for; prefetching whole columns would overflow the 50 MB L2 for
//     the large weights and read their lines twice.
//
// Requirements (the entry checks them: decode_gemm_launch.hpp): M <= 16, 16-bit types, a row-major
// a and a column-major b, K, lda and ldb multiples of 8 and the operands 16-byte aligned, M, N and
// K positive. The grid's x dimension is the column tiles: N / 8 < 2^31.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/common/cuda/vec.cuh"
#include "kernels/gemm/cuda/decode_gemm_launch.hpp"

namespace tileops::kernels::cuda {

namespace decode_gemm {

constexpr int kMaxM = kDecodeGemmMaxRows;
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kStepK = 32;  // k of a warp step: 4 lanes x 8
// Bytes of each of its columns a block asks L2 for before the wait (Note [Decode GEMM]).
constexpr std::int64_t kPrefetchBytes = 4096;

__device__ __forceinline__ std::uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// d += a (16 x 16, row-major fragment) x b (16 x 8, column-major fragment), float32 accumulation.
template <class T>
__device__ __forceinline__ void mma(float (&d)[4], std::uint32_t a0, std::uint32_t a1,
                                    std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                    std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// The weight is read once: streamed, evict-first. (A load that allocates no L1 line,
// ld.global.nc.L1::no_allocate, measured the same on the H200.)
__device__ __forceinline__ uint4 load_weight(const void* p) {
  return __ldcs(static_cast<const uint4*>(p));
}
// a is read by every block: kept in L1.
__device__ __forceinline__ uint4 load_rows(const void* p) {
  return __ldg(static_cast<const uint4*>(p));
}

}  // namespace decode_gemm

// kTiles: column tiles of 8 a block; kUnroll: steps a warp loads before multiplying; kUpperRows:
// M > 8 (rows 8-15 of the instruction hold rows of a).
template <class T, int kTiles, int kUnroll, bool kUpperRows>
__global__ void __launch_bounds__(decode_gemm::kThreads)
    decode_gemm_kernel(const DecodeGemmProblem p) {
  using namespace decode_gemm;
  constexpr int kCols = 8 * kTiles;
  __shared__ float partial[kWarps][kMaxM][kCols];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, q = lane % 4;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * kCols;
  if (const std::int64_t col = col0 + static_cast<std::int64_t>(threadIdx.x);
      threadIdx.x < kCols && col < p.n) {
    const std::int64_t bytes = p.k * 2 < kPrefetchBytes ? p.k * 2 : kPrefetchBytes;
    prefetch_l2(static_cast<const T*>(p.b) + col * p.ldb, static_cast<std::uint32_t>(bytes));
  }
  begin_dependent_kernel();
  // Columns past N and rows past M read the last ones instead, so that the loads need no
  // predicate; what they compute is never stored.
  const T* b_col[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const std::int64_t col = min(col0 + 8 * j + g, p.n - 1);
    b_col[j] = static_cast<const T*>(p.b) + col * p.ldb + 8 * q;
  }
  const T* a_lower = static_cast<const T*>(p.a) + min(g, p.m - 1) * p.lda + 8 * q;
  const T* a_upper = static_cast<const T*>(p.a) + min(g + 8, p.m - 1) * p.lda + 8 * q;

  float acc[kTiles][4] = {};
  const auto multiply = [&](const uint4(&bv)[kTiles], const uint4& lower, const uint4& upper) {
#pragma unroll
    for (int j = 0; j < kTiles; ++j) {
      mma<T>(acc[j], lower.x, upper.x, lower.y, upper.y, bv[j].x, bv[j].y);
      mma<T>(acc[j], lower.z, upper.z, lower.w, upper.w, bv[j].z, bv[j].w);
    }
  };
  const uint4 zero = make_uint4(0, 0, 0, 0);
  // Groups of kUnroll steps wholly inside K: every load issued before the first product.
  const std::int64_t whole_steps = p.k / kStepK;
  std::int64_t first = warp;
  for (; first + kWarps * (kUnroll - 1) < whole_steps; first += kWarps * kUnroll) {
    uint4 bv[kUnroll][kTiles], lower[kUnroll], upper[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t k = (first + std::int64_t{kWarps} * u) * kStepK;
#pragma unroll
      for (int j = 0; j < kTiles; ++j) bv[u][j] = load_weight(b_col[j] + k);
      lower[u] = load_rows(a_lower + k);
      upper[u] = kUpperRows ? load_rows(a_upper + k) : zero;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) multiply(bv[u], lower[u], upper[u]);
  }
  // The last steps one at a time, a lane's vector past K read as zeros (K is a multiple of 8, so
  // a vector is wholly inside or wholly past the end).
  const std::int64_t steps = (p.k + kStepK - 1) / kStepK;
  for (; first < steps; first += kWarps) {
    const std::int64_t k = first * kStepK;
    const bool k_in = k + 8 * q < p.k;
    uint4 bv[kTiles];
#pragma unroll
    for (int j = 0; j < kTiles; ++j) bv[j] = k_in ? load_weight(b_col[j] + k) : zero;
    const uint4 lower = k_in ? load_rows(a_lower + k) : zero;
    const uint4 upper = kUpperRows && k_in ? load_rows(a_upper + k) : zero;
    multiply(bv, lower, upper);
  }

  // Lane (g, q) holds rows g and g + 8 of columns 8j + 2q + {0, 1}.
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    partial[warp][g][8 * j + 2 * q] = acc[j][0];
    partial[warp][g][8 * j + 2 * q + 1] = acc[j][1];
    if constexpr (kUpperRows) {
      partial[warp][g + 8][8 * j + 2 * q] = acc[j][2];
      partial[warp][g + 8][8 * j + 2 * q + 1] = acc[j][3];
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < p.m * kCols; i += kThreads) {
    const int row = i / kCols, c = i % kCols;
    const std::int64_t col = col0 + c;
    if (col >= p.n) continue;
    float sum = p.bias ? to_float(static_cast<const T*>(p.bias)[col]) : 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += partial[w][row][c];
    static_cast<T*>(p.out)[row * p.n + col] = from_float<T>(sum);
  }
}

// Enqueues the product with kTiles column tiles a block and kUnroll steps in flight a warp.
template <class T, int kTiles, int kUnroll>
cudaError_t launch_decode_gemm_kernel(const DecodeGemmProblem& p, cudaStream_t stream) {
  const std::int64_t blocks = (p.n + 8 * kTiles - 1) / (8 * kTiles);
  if (p.m <= 8)
    decode_gemm_kernel<T, kTiles, kUnroll, false>
        <<<static_cast<unsigned>(blocks), decode_gemm::kThreads, 0, stream>>>(p);
  else
    decode_gemm_kernel<T, kTiles, kUnroll, true>
        <<<static_cast<unsigned>(blocks), decode_gemm::kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace tileops::kernels::cuda
