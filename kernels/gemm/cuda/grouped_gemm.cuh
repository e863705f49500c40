// The grouped GEMM kernel of GroupedGemmFwdOp (manifest/gemm.yaml): framework-free, plain pointers
// and sizes. Instantiated and launched by grouped_gemm_launch.cu.
//
// Note [Grouped GEMM kernel]
// One block computes one BM x BN tile of the output: rows [row0, row_end) of one group g, columns
// [n0, n0 + BN), as x[rows, :] @ w[g][:, cols]. The tiles are found on the device, from offsets,
// without a host synchronisation:
//
//   - The clamped ends end_g = clamp(offsets[g], end_{g-1}, M) (end_{-1} = 0) are a prefix maximum,
//     end_g = min(M, max(0, offsets[0..g])), so a block computes all of them with a block-wide
//     scan (chunks of kThreads groups), then each group's tiles ceil((end_g - end_{g-1}) / BM) and
//     their prefix sum. The rows past end_{E-1} are one more "group" whose tiles write zeros.
//   - The grid covers ceil(M / BM) + E row tiles (splitting M rows into E + 1 runs adds at most one
//     partial tile per split, so no schedule needs more) by ceil(N / BN) column tiles; row tiles
//     past the schedule's last exit. Every block reads the E offsets (from L2 after the first): a
//     few hundred integers against a K-long main loop.
//   - The grid is one-dimensional and walks bands of kBand row tiles column tile by column tile,
//     so that the blocks resident at once share their x rows (one band) and w columns (the band's
//     few experts) through L2. Row tiles in launch order instead would re-read x from memory for
//     every column tile when groups are a tile or two tall (DeepSeek-V3: 128 rows per expert).
//   - Whatever offsets holds, every row a block reads or writes lies in [0, M): the ends are
//     clamped before they are used. The first block checks the raw values and, in the checking
//     mode, reports the first negative, decreasing or past-M offset (Note [Kernel checking mode]).
//
// The main loop: tensor cores through nvcuda::wmma (16x16x16, float accumulation), 8 warps as 2
// (rows) x 4 (columns), each warp 64 x 32 of the 128 x 128 tile (4 x 2 accumulator fragments),
// BK = 32, and a kStages-deep cp.async pipeline of shared-memory tiles. Rows of the shared tiles
// are padded by 8 elements (16 bytes), so that the 16 rows a fragment load reads start in
// different banks. w's tile is kept in its global layout: [BK][BN] for a row-major w, [BN][BK] for
// a column-major one, loaded as wmma's row_major or col_major matrix_b, so that both layouts read
// whole 16-byte runs of memory. The vector variant loads 16-byte chunks with cp.async (zero-filled
// past the group's rows, K and N); the general variant loads element by element (any K, N,
// alignment). The epilogue goes through a per-warp 16 x 16 float tile in shared memory, written
// as 16-byte rows where the variant allows.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda/kernel_check.cuh"
#include "kernels/common/cuda/vec.cuh"

namespace tileops::kernels::cuda {

namespace grouped_gemm {

constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kBM / kWarpsM, kWarpN = kBN / kWarpsN;  // 64 x 32
constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 16;    // 4 x 2
constexpr int kStages = 4;
constexpr int kPad = 8;     // elements added to each shared row: 16 bytes
constexpr int kVector = 8;  // 16-bit elements per 16-byte chunk
constexpr int kBand = 8;    // row tiles per band of the launch order

// Elements of one stage's tiles: x as [BM][BK + pad]; w as [BK][BN + pad] (row-major) or
// [BN][BK + pad] (column-major).
constexpr int kAStride = kBK + kPad;
constexpr int kATile = kBM * kAStride;
template <bool kColumnMajor>
constexpr int kBStride = kColumnMajor ? kBK + kPad : kBN + kPad;
template <bool kColumnMajor>
constexpr int kBTile = kColumnMajor ? kBN* kBStride<true> : kBK* kBStride<false>;

template <bool kColumnMajor>
constexpr int shared_bytes() {
  return kStages * (kATile + kBTile<kColumnMajor>)*2;
}
static_assert(kThreads / 32 * 16 * 16 * 4 <= shared_bytes<false>(), "epilogue scratch fits");

}  // namespace grouped_gemm

// One call's operands. w[g][k][n] is at w + g * w_expert + k * w_k + n * w_n, where (w_k, w_n) is
// (ld, 1) for a row-major w and (1, ld) for a column-major one.
template <class T>
struct GroupedGemmParams {
  const T* x = nullptr;  // [M, K] contiguous
  const T* w = nullptr;
  const std::int32_t* offsets = nullptr;  // [E]
  T* out = nullptr;                       // [M, N] contiguous
  std::int64_t m = 0, n = 0, k = 0, groups = 0;
  std::int64_t w_expert = 0, w_ld = 0;
  std::int64_t row_tiles = 0, col_tiles = 0;  // the grid: row_tiles * col_tiles blocks
  KernelCheckRecord* check = nullptr;
};

namespace grouped_gemm {

// The tile a block computes: rows [row0, row_end) of `group` (groups: the zero tail), or none.
struct Tile {
  std::int64_t group;
  std::int64_t row0;
  std::int64_t row_end;
};

// Inclusive scan of v over the block's threads under a commutative, associative `op`.
template <class Op>
__device__ std::int64_t block_inclusive_scan(std::int64_t v, Op op, std::int64_t* warp_totals) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int d = 1; d < 32; d *= 2) {
    const std::int64_t up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v = op(up, v);
  }
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  for (int w = 0; w < warp; ++w) v = op(warp_totals[w], v);
  __syncthreads();
  return v;
}

// Finds the block's tile from offsets (Note [Grouped GEMM kernel]); group = -1 when it has none.
// The first block reports the first bad offset to `check`.
template <class T>
__device__ Tile find_tile(const GroupedGemmParams<T>& p, std::int64_t tile_index) {
  __shared__ std::int64_t warp_totals[kThreads / 32];
  __shared__ std::int64_t ends[kThreads];
  __shared__ std::int64_t chunk_tiles;
  __shared__ Tile tile;
  const bool reports = p.check != nullptr && blockIdx.x == 0;
  if (threadIdx.x == 0) tile = Tile{-1, 0, 0};
  __syncthreads();
  std::int64_t carry_end = 0, carry_tiles = 0;
  for (std::int64_t base = 0; base < p.groups; base += kThreads) {
    const std::int64_t g = base + threadIdx.x;
    const bool in = g < p.groups;
    const std::int64_t offset = in ? p.offsets[g] : 0;
    if (reports && in) {
      const bool bad = offset < 0 || offset > p.m || (g > 0 && offset < p.offsets[g - 1]);
      if (bad) report_kernel_check(p.check, g, offset);
    }
    const auto max_op = [](std::int64_t a, std::int64_t b) { return a > b ? a : b; };
    const auto sum_op = [](std::int64_t a, std::int64_t b) { return a + b; };
    const std::int64_t prefix_max = block_inclusive_scan(in ? offset : 0, max_op, warp_totals);
    const std::int64_t reached = max_op(prefix_max, carry_end);
    const std::int64_t end = reached < p.m ? reached : p.m;
    ends[threadIdx.x] = end;
    __syncthreads();
    const std::int64_t begin = threadIdx.x == 0 ? carry_end : ends[threadIdx.x - 1];
    const std::int64_t tiles = (end - begin + kBM - 1) / kBM;
    const std::int64_t through = block_inclusive_scan(tiles, sum_op, warp_totals);
    const std::int64_t first = carry_tiles + through - tiles;
    if (in && tile_index >= first && tile_index < first + tiles)
      tile = Tile{g, begin + (tile_index - first) * kBM, end};
    if (threadIdx.x == kThreads - 1) chunk_tiles = through;
    __syncthreads();
    carry_end = ends[kThreads - 1];
    carry_tiles += chunk_tiles;
    __syncthreads();
  }
  if (tile.group >= 0) return tile;
  const std::int64_t row0 = carry_end + (tile_index - carry_tiles) * kBM;
  if (row0 < p.m) return Tile{p.groups, row0, p.m};
  return Tile{-1, 0, 0};
}

__device__ __forceinline__ void cp_async_16(void* shared, const void* global, bool valid) {
  const auto s = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  const int bytes = valid ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Loads k-tile `kt` of the block's x rows and w[g] columns into one stage.
template <class T, bool kColumnMajor, bool kVectorLoads>
__device__ void load_stage(const GroupedGemmParams<T>& p, const T* w, const Tile& t,
                           std::int64_t n0, std::int64_t kt, T* sa, T* sb) {
  const std::int64_t k0 = kt * kBK;
  const T zero = T(0.0f);
  if constexpr (kVectorLoads) {
    // x: BM rows of BK / 8 chunks; w: BK x BN / 8 (row-major) or BN x BK / 8 chunks.
    for (int c = threadIdx.x; c < kBM * kBK / kVector; c += kThreads) {
      const int r = c / (kBK / kVector), kc = c % (kBK / kVector) * kVector;
      const std::int64_t row = t.row0 + r, k = k0 + kc;
      const bool valid = row < t.row_end && k < p.k;
      cp_async_16(sa + r * kAStride + kc, valid ? p.x + row * p.k + k : p.x, valid);
    }
    for (int c = threadIdx.x; c < kBK * kBN / kVector; c += kThreads) {
      if constexpr (kColumnMajor) {
        const int nn = c / (kBK / kVector), kc = c % (kBK / kVector) * kVector;
        const std::int64_t n = n0 + nn, k = k0 + kc;
        const bool valid = n < p.n && k < p.k;
        cp_async_16(sb + nn * kBStride<true> + kc, valid ? w + n * p.w_ld + k : p.w, valid);
      } else {
        const int kk = c / (kBN / kVector), nc = c % (kBN / kVector) * kVector;
        const std::int64_t n = n0 + nc, k = k0 + kk;
        const bool valid = n < p.n && k < p.k;
        cp_async_16(sb + kk * kBStride<false> + nc, valid ? w + k * p.w_ld + n : p.w, valid);
      }
    }
  } else {
    for (int e = threadIdx.x; e < kBM * kBK; e += kThreads) {
      const int r = e / kBK, kk = e % kBK;
      const std::int64_t row = t.row0 + r, k = k0 + kk;
      sa[r * kAStride + kk] = row < t.row_end && k < p.k ? p.x[row * p.k + k] : zero;
    }
    for (int e = threadIdx.x; e < kBK * kBN; e += kThreads) {
      if constexpr (kColumnMajor) {
        const int nn = e / kBK, kk = e % kBK;
        const std::int64_t n = n0 + nn, k = k0 + kk;
        sb[nn * kBStride<true> + kk] = n < p.n && k < p.k ? w[n * p.w_ld + k] : zero;
      } else {
        const int kk = e / kBN, nn = e % kBN;
        const std::int64_t n = n0 + nn, k = k0 + kk;
        sb[kk * kBStride<false> + nn] = n < p.n && k < p.k ? w[k * p.w_ld + n] : zero;
      }
    }
  }
}

// Writes rows [row0, row_end) x columns [n0, n0 + BN) of out as zeros (the rows past the last
// group's end).
template <class T, bool kVectorLoads>
__device__ void write_zeros(const GroupedGemmParams<T>& p, const Tile& t, std::int64_t n0) {
  if constexpr (kVectorLoads) {
    for (int c = threadIdx.x; c < kBM * kBN / kVector; c += kThreads) {
      const std::int64_t row = t.row0 + c / (kBN / kVector), n = n0 + c % (kBN / kVector) * kVector;
      if (row < t.row_end && n < p.n)
        *reinterpret_cast<uint4*>(p.out + row * p.n + n) = make_uint4(0, 0, 0, 0);
    }
  } else {
    for (int e = threadIdx.x; e < kBM * kBN; e += kThreads) {
      const std::int64_t row = t.row0 + e / kBN, n = n0 + e % kBN;
      if (row < t.row_end && n < p.n) p.out[row * p.n + n] = T(0.0f);
    }
  }
}

}  // namespace grouped_gemm

// T: __half or __nv_bfloat16. kColumnMajor: w's matrices are column-major. kVectorLoads: 16-byte
// aligned pointers and leading dimensions, K and N multiples of 8 (the vector variant's refusal).
template <class T, bool kColumnMajor, bool kVectorLoads>
__global__ void __launch_bounds__(grouped_gemm::kThreads, 2)
    grouped_gemm_kernel(const GroupedGemmParams<T> p) {
  using namespace grouped_gemm;
  namespace wmma = nvcuda::wmma;
  using BLayout = std::conditional_t<kColumnMajor, wmma::col_major, wmma::row_major>;
  extern __shared__ __align__(128) unsigned char shared[];
  T* const sa = reinterpret_cast<T*>(shared);
  T* const sb = sa + kStages * kATile;

  // Block -> (row tile, column tile): bands of kBand row tiles, column tile by column tile.
  const std::int64_t block = blockIdx.x;
  const std::int64_t band = block / (kBand * p.col_tiles);
  const std::int64_t in_band = block - band * kBand * p.col_tiles;
  const std::int64_t left = p.row_tiles - band * kBand;
  const std::int64_t band_rows = left < kBand ? left : kBand;
  const Tile t = find_tile(p, band * kBand + in_band % band_rows);
  if (t.group < 0) return;
  const std::int64_t n0 = in_band / band_rows * kBN;
  if (t.group == p.groups) return write_zeros<T, kVectorLoads>(p, t, n0);

  const T* const w = p.w + t.group * p.w_expert;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
  for (auto& row : acc)
    for (auto& f : row) wmma::fill_fragment(f, 0.0f);

  const std::int64_t k_tiles = (p.k + kBK - 1) / kBK;
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles)
      load_stage<T, kColumnMajor, kVectorLoads>(p, w, t, n0, s, sa + s * kATile,
                                                sb + s * kBTile<kColumnMajor>);
    cp_async_commit();
  }
  for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has arrived, and every warp is done with the stage the prefetch below overwrites.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const std::int64_t next = kt + kStages - 1;
    if (next < k_tiles) {
      const int s = static_cast<int>(next % kStages);
      load_stage<T, kColumnMajor, kVectorLoads>(p, w, t, n0, next, sa + s * kATile,
                                                sb + s * kBTile<kColumnMajor>);
    }
    cp_async_commit();
    const int s = static_cast<int>(kt % kStages);
    const T* const a_tile = sa + s * kATile + warp_m * kWarpM * kAStride;
    const T* const b_tile = sb + s * kBTile<kColumnMajor>;
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BLayout> b[kFragsN];
      for (int i = 0; i < kFragsM; ++i)
        wmma::load_matrix_sync(a[i], a_tile + i * 16 * kAStride + kk, kAStride);
      for (int j = 0; j < kFragsN; ++j) {
        const int col = warp_n * kWarpN + j * 16;
        if constexpr (kColumnMajor)
          wmma::load_matrix_sync(b[j], b_tile + col * kBStride<true> + kk, kBStride<true>);
        else
          wmma::load_matrix_sync(b[j], b_tile + kk * kBStride<false> + col, kBStride<false>);
      }
      for (int i = 0; i < kFragsM; ++i)
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // Each lane writes 8 adjacent columns of one row of a 16 x 16 fragment.
  float* const scratch = reinterpret_cast<float*>(shared) + warp * 16 * 16;
  const int r = lane / 2, c = lane % 2 * 8;
  for (int i = 0; i < kFragsM; ++i)
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const std::int64_t row = t.row0 + warp_m * kWarpM + i * 16 + r;
      const std::int64_t col = n0 + warp_n * kWarpN + j * 16 + c;
      if (row < t.row_end) {
        T* const dst = p.out + row * p.n + col;
        const float* const src = scratch + r * 16 + c;
        if (kVectorLoads && col + kVector <= p.n) {
          alignas(16) T v[kVector];
          for (int e = 0; e < kVector; ++e) v[e] = from_float<T>(src[e]);
          *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
        } else {
          for (int e = 0; e < kVector; ++e)
            if (col + e < p.n) dst[e] = from_float<T>(src[e]);
        }
      }
      __syncwarp();
    }
}

}  // namespace tileops::kernels::cuda
