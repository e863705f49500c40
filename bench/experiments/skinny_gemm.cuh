// The skinny GEMM of GemmFwdOp's decode shapes (M <= 16): framework-free, plain pointers and
// sizes. Launched by skinny_gemm.cu; one of the Hopper GEMM entry's tuning candidates
// (docs/gemm.md, "The skinny kernel").
//
// Note [Skinny GEMM]
// With a handful of rows, out = a @ b is a stream of the weight b: K x N elements read once,
// 2 x M flops each. The time is the weight's bytes over HBM's bandwidth, plus the ramp and the tail
// of one wave; tiles made for compute (128 x 128 and up) leave most of the card idle at N = 4096,
// and split-K reductions cost another kernel. This kernel only streams:
//
//   - A warp step is 64 columns by 32 k of b. Lane (g, q) = (lane / 4, lane % 4) loads eight
//     16-byte vectors: columns [64t + 8g, +8) and k [32c + 8q, +8). For a column-major b (the
//     transposed view of an nn.Linear weight) each vector is 8 consecutive k of one column; for a
//     row-major b, 8 consecutive columns of one k. One warp instruction reads 512 bytes in runs of
//     64 (column-major) or 128 (row-major) bytes.
//   - The products are mma.sync m16n8k16 (float32 accumulation), a's rows padded to 16 with zeros.
//     A dot product does not depend on the order of its terms, so the k slots of the instruction
//     are mapped onto k as the loads lie, and its n slots onto columns likewise: n slot g of
//     instruction j is column 8g + j, k slots 2q + {0, 1} and 2q + 8 + {0, 1} of step s are
//     k 8q + 4s + {0, 1} and 8q + 4s + {2, 3}. Then a column-major vector is two ready fragment
//     registers per instruction, a row-major one is paired with the next k's by a byte permute, and
//     a's fragments are the 16-byte vectors a[g][32c + 8q, +8) and a[g + 8][...] as loaded. Each
//     lane ends with rows g and g + 8 of 16 consecutive columns, 16q + [0, 16).
//   - A block is 8 warps on one 64-column tile, each taking every 8th step of the block's k range;
//     the next step's loads are issued before the current one's products (two in flight a warp,
//     16 warps an SM). A cluster of `splits` blocks shares the tile's k range, and the blocks add
//     their sums through distributed shared memory, each rank finishing an equal share of the
//     tile's outputs (bias added in float32, one rounding): no workspace, no second kernel. The
//     split is the tuning knob: enough warps to keep HBM busy, few enough for whole waves.
//
// Requirements (skinny_gemm_refusal): M <= 16; 16-bit types; K, lda and ldb multiples of 8 and
// the operands 16-byte aligned; a row-major b also needs N a multiple of 8 (a column-major one
// serves any N). Columns and k past the ends are zero-filled, never read.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

namespace skinny_gemm {

constexpr int kMaxM = 16;
#ifndef SKINNY_WARPS
constexpr int kWarps = 4;
constexpr int kStages = 6;  // warp steps in flight, a warp
#else
constexpr int kWarps = SKINNY_WARPS;
constexpr int kStages = SKINNY_STAGES;
#endif
constexpr int kThreads = 32 * kWarps;
constexpr int kTileN = 64;     // columns of a block
constexpr int kStepK = 32;     // k of a warp step
constexpr int kMaxSplits = 8;  // the portable cluster size
constexpr int kSlot = 8 * 32;  // 16-byte vectors of one warp step
constexpr int shared_bytes() { return kWarps * kStages * kSlot * 16; }
static_assert(kStages * kSlot * 16 >= kMaxM * kTileN * 4, "a warp's partial sums fit its ring");

}  // namespace skinny_gemm

// One product out [M, N] = a [M, K] @ b [K, N] (+ bias [N]). a is row-major with leading
// dimension lda; b[k][n] is at b + k * ldb + n (row-major) or b + n * ldb + k (column-major); out
// is contiguous.
struct SkinnyGemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;
  void* out = nullptr;
  std::int64_t lda = 0, ldb = 0;
  int m = 0;
  std::int64_t n = 0, k = 0;
  std::int64_t steps_per_split = 0;  // k steps each block of a cluster takes
};

namespace skinny_gemm {

// Sixteen bytes of b into shared memory, through L2 only (read once), or zeros when `valid` is
// false (nothing is read).
__device__ __forceinline__ void copy_async(uint4* shared, const void* global, bool valid) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(global),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;"); }
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending));
}

__device__ __forceinline__ std::uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Half j of `lo` and of `hi`, packed (lo's in the low 16 bits).
__device__ __forceinline__ std::uint32_t pair(const uint4& lo, const uint4& hi, int j) {
  return __byte_perm(word(lo, j / 2), word(hi, j / 2), (j % 2) == 0 ? 0x5410 : 0x7632);
}

template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Starts the copies of one warp step of b into `slot` ([8 vectors][32 lanes]): lane (g, q)'s
// vector i is column 8g + i, k [k0, k0 + 8) (column-major b), or k0 + i, columns [8g, 8g + 8)
// (row-major b, N a multiple of 8).
template <bool kBColumnMajor>
__device__ __forceinline__ void copy_step(uint4* slot, const SkinnyGemmArgs& p, std::int64_t step,
                                          std::int64_t col0, int lane, int q) {
  const auto* b = static_cast<const std::uint16_t*>(p.b);
  const std::int64_t k0 = step * kStepK + 8 * q;
  const bool k_in = k0 < p.k;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if constexpr (kBColumnMajor) {
      const bool valid = k_in && col0 + i < p.n;
      copy_async(slot + i * 32 + lane, valid ? b + (col0 + i) * p.ldb + k0 : b, valid);
    } else {
      const bool valid = k_in && col0 < p.n;
      copy_async(slot + i * 32 + lane, valid ? b + (k0 + i) * p.ldb + col0 : b, valid);
    }
  }
}

// a's rows g and g + 8 at the step's k (zeros past M and K), from L1.
__device__ __forceinline__ void load_a(uint4& lo, uint4& hi, const SkinnyGemmArgs& p,
                                       std::int64_t step, int g, int q) {
  const auto* a = static_cast<const std::uint16_t*>(p.a);
  const std::int64_t k0 = step * kStepK + 8 * q;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  lo = k0 < p.k && g < p.m ? __ldg(reinterpret_cast<const uint4*>(a + g * p.lda + k0)) : zero;
  hi = k0 < p.k && g + 8 < p.m ? __ldg(reinterpret_cast<const uint4*>(a + (g + 8) * p.lda + k0))
                               : zero;
}

template <class T, bool kBColumnMajor>
__device__ __forceinline__ void multiply_step(float (&acc)[8][4], const uint4 (&b)[8],
                                              const uint4& a_lo, const uint4& a_hi) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const std::uint32_t a[4] = {word(a_lo, 2 * half), word(a_hi, 2 * half),
                                word(a_lo, 2 * half + 1), word(a_hi, 2 * half + 1)};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      std::uint32_t b0, b1;
      if constexpr (kBColumnMajor) {
        b0 = word(b[j], 2 * half);
        b1 = word(b[j], 2 * half + 1);
      } else {
        b0 = pair(b[4 * half], b[4 * half + 1], j);
        b1 = pair(b[4 * half + 2], b[4 * half + 3], j);
      }
      mma<T>(acc[j], a, b0, b1);
    }
  }
}

}  // namespace skinny_gemm

// Grid (ceil(N / 64), splits), clusters of (1, splits, 1), kThreads threads, shared_bytes() of
// dynamic shared memory (Note [Skinny GEMM]).
template <class T, bool kBColumnMajor>
__global__ void __launch_bounds__(skinny_gemm::kThreads, 2)
    skinny_gemm_kernel(const SkinnyGemmArgs p) {
  using namespace skinny_gemm;
  namespace cg = cooperative_groups;
  extern __shared__ uint4 ring[];  // [kWarps][kStages][8][32]
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, q = lane % 4;
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * kTileN;
  const std::int64_t col0 = tile0 + 8 * g;
  uint4* mine = ring + warp * kStages * kSlot;

  // This warp's steps: every kWarps-th of the block's share of K.
  const std::int64_t steps = (p.k + kStepK - 1) / kStepK;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * p.steps_per_split + warp;
  const std::int64_t end =
      first - warp + p.steps_per_split < steps ? first - warp + p.steps_per_split : steps;
  const std::int64_t count = first < end ? (end - first + kWarps - 1) / kWarps : 0;
  float acc[8][4] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < count) copy_step<kBColumnMajor>(mine + s * kSlot, p, first + s * kWarps, col0, lane, q);
    commit_copies();
  }
  for (std::int64_t i = 0; i < count; ++i) {
    wait_copies<kStages - 2>();  // step i landed (each lane waits for its own copies)
    const uint4* slot = mine + (i % kStages) * kSlot;
    uint4 b[8];
#pragma unroll
    for (int v = 0; v < 8; ++v) b[v] = slot[v * 32 + lane];
    uint4 a_lo, a_hi;
    load_a(a_lo, a_hi, p, first + i * kWarps, g, q);
    // Refill the slot read in the previous iteration.
    const std::int64_t ahead = i + kStages - 1;
    if (ahead < count)
      copy_step<kBColumnMajor>(mine + (ahead % kStages) * kSlot, p, first + ahead * kWarps, col0,
                               lane, q);
    commit_copies();
    multiply_step<T, kBColumnMajor>(acc, b, a_lo, a_hi);
  }
  wait_copies<0>();
  __syncthreads();  // the ring is the warps' partial sums from here: [kWarps][kMaxM][kTileN]
  float* partial = reinterpret_cast<float*>(ring);
  float* own = partial + warp * kMaxM * kTileN;
  // Lane (g, q) holds rows g and g + 8 of columns 16q + 8i + j (acc[j][i] and acc[j][2 + i]).
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int col = 16 * q + 8 * i + j;
      own[g * kTileN + col] = acc[j][i];
      own[(g + 8) * kTileN + col] = acc[j][2 + i];
    }
  __syncthreads();
  const int outputs = p.m * kTileN;
  for (int i = static_cast<int>(threadIdx.x); i < outputs; i += kThreads) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += partial[w * kMaxM * kTileN + i];
    partial[i] = sum;  // the block's sum, in warp 0's rows
  }
  const cg::cluster_group cluster = cg::this_cluster();
  const int ranks = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  if (ranks > 1)
    cluster.sync();  // every block's sum complete, visible to the cluster
  else
    __syncthreads();
  for (int i = rank * kThreads + static_cast<int>(threadIdx.x); i < outputs;
       i += ranks * kThreads) {
    const int row = i / kTileN, col = i % kTileN;
    if (tile0 + col >= p.n) continue;
    float sum = partial[i];
    if (ranks > 1) {
      sum = 0.0f;
      for (int r = 0; r < ranks; ++r) sum += cluster.map_shared_rank(partial, r)[i];
    }
    if (p.bias != nullptr) sum += to_float(static_cast<const T*>(p.bias)[tile0 + col]);
    static_cast<T*>(p.out)[row * p.n + tile0 + col] = from_float<T>(sum);
  }
  if (ranks > 1) cluster.sync();  // no block leaves while another reads its sums
}

// Launches the kernel on `stream` over `splits` blocks a tile (1 to kMaxSplits), one cluster.
template <class T, bool kBColumnMajor>
cudaError_t launch_skinny_gemm_kernel(SkinnyGemmArgs args, int splits, cudaStream_t stream) {
  using namespace skinny_gemm;
  const std::int64_t steps = (args.k + kStepK - 1) / kStepK;
  args.steps_per_split = (steps + splits - 1) / splits;
  cudaLaunchConfig_t config{};
  config.gridDim =
      dim3(static_cast<unsigned>((args.n + kTileN - 1) / kTileN), static_cast<unsigned>(splits), 1);
  config.blockDim = dim3(kThreads, 1, 1);
  config.dynamicSmemBytes = shared_bytes();
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = static_cast<unsigned>(splits);
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  static const cudaError_t configured =
      cudaFuncSetAttribute(skinny_gemm_kernel<T, kBColumnMajor>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes());
  if (configured != cudaSuccess) return configured;
  return cudaLaunchKernelEx(&config, skinny_gemm_kernel<T, kBColumnMajor>, args);
}

}  // namespace tileops::kernels::cuda
