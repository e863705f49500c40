// An experiment, not part of the library: where the time of the few-output reductions goes, and
// designs that keep every SM's loads in flight while their partial results are combined.
// bench/experiments/reduce_few_outputs.cu measured 13.4-64.8 us for the column sums of bfloat16
// [2048, 4096] (SumFwdOp hidden-state-dim0; the library 14.1 us): there a thread owned a column
// vector, so the grid had as few threads as column vectors times splits, and the finish summed
// every split's partials one load after another. Here a block owns a tile of 256 columns (a warp
// reads 512 contiguous bytes of a row) and kLanes rows at a time, every row of its split in flight
// at once where kUnroll allows, and merges its lanes in shared memory; the splits of a tile are
// then combined in one of three ways, all in split order (the same bits on every run):
//   finish kernel  the splits write coalesced partials [split][column]; a second kernel (dependent
//                  launch) gives each column a thread that loads all its splits at once
//   last block     the same partials; the last block of a tile to arrive (a ticket from one
//                  counter a tile) sums them
//   cluster        the splits of a tile form a thread-block cluster; each block's 256 sums stay in
//                  its shared memory and each block adds a slice of the columns across the
//                  cluster's blocks (distributed shared memory): no partials in global memory, no
//                  second kernel, no atomic
// And for the whole-tensor sums (float32 [2048, 4096], SumFwdOp hidden-state-full, and bfloat16 of
// that shape, AmaxFwdOp fp8-per-tensor's size): a block per 4 vectors a thread (as the library's
// held rows, every load issued before the first is used), block totals, and the last block to
// arrive summing them in block order. Every variant is checked against float64 sums first (FAIL
// on a miss), then timed as the library times (sets rotated beyond 4x the L2, CUDA graphs of
// dependent launches, the median batch). Results:
// bench/results/2026-12-04-h200-reduction-column-tiles.md (the library took the finishing kernel
// with 16 lanes of 8 steps: Note [Column splits] in kernels/reduction/cuda/reduce_axes.cuh).
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/reduce_column_tiles.cu -o build/reduce_column_tiles && \
//        build/reduce_column_tiles
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/reduce_inputs.cuh"

namespace {

namespace cg = cooperative_groups;

using namespace experiments::reduce;

constexpr int kTileVectors = 32;                // a warp's 512 bytes of a row
constexpr int kTileColumns = kTileVectors * 8;  // 256 bfloat16 columns
constexpr int kMaxSplits = 32;

__device__ __forceinline__ void wait_previous() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// The block's sums of its tile (blockIdx.y) over its split (blockIdx.x of gridDim.x) of the rows:
// column t of the tile for threads t < 256, after the block's barrier. Threads are (32, kLanes).
template <int kLanes, int kUnroll>
__device__ __forceinline__ float tile_sum(const uint4* x, int rows, int vectors) {
  __shared__ float4 lanes[kLanes][kTileVectors * 2];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int splits = static_cast<int>(gridDim.x), split = static_cast<int>(blockIdx.x);
  const int begin = rows * split / splits, end = rows * (split + 1) / splits;
  const int v = static_cast<int>(blockIdx.y) * kTileVectors + tx;
  float acc[8] = {};
  for (int r = begin + ty; r < end; r += kLanes * kUnroll) {
    uint4 w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (r + u * kLanes < end) w[u] = x[static_cast<long long>(r + u * kLanes) * vectors + v];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (r + u * kLanes < end) add8(acc, w[u]);
  }
  lanes[ty][tx * 2] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  lanes[ty][tx * 2 + 1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
  __syncthreads();
  const int t = ty * 32 + tx;
  float total = 0.0f;
  if (t < kTileColumns) {
#pragma unroll
    for (int k = 0; k < kLanes; ++k) total += reinterpret_cast<const float*>(lanes[k])[t];
  }
  return total;
}

// Column c's total over the `splits` partials [split][column], all loads issued first.
__device__ __forceinline__ float splits_total(const float* partials, int splits, int c) {
  float p[kMaxSplits];
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s)
    if (s < splits) p[s] = __ldcg(partials + s * kCols + c);  // other blocks' writes: from L2
  float total = 0.0f;
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s)
    if (s < splits) total += p[s];
  return total;
}

template <int kLanes, int kUnroll>
__global__ void __launch_bounds__(32 * kLanes)
    tile_partials(const uint4* x, float* partials, int rows, int vectors) {
  wait_previous();
  const float total = tile_sum<kLanes, kUnroll>(x, rows, vectors);
  const int t = threadIdx.y * 32 + threadIdx.x;
  if (t < kTileColumns) partials[blockIdx.x * kCols + blockIdx.y * kTileColumns + t] = total;
}

__global__ void __launch_bounds__(256)
    finish_columns(const float* partials, __nv_bfloat16* out, int splits) {
  wait_previous();
  const int c = blockIdx.x * 256 + threadIdx.x;
  out[c] = __float2bfloat16(splits_total(partials, splits, c));
}

template <int kLanes, int kUnroll>
__global__ void __launch_bounds__(32 * kLanes)
    tile_last_block(const uint4* x, float* partials, unsigned* counters, __nv_bfloat16* out,
                    int rows, int vectors) {
  wait_previous();
  const float total = tile_sum<kLanes, kUnroll>(x, rows, vectors);
  const int t = threadIdx.y * 32 + threadIdx.x;
  const int c = blockIdx.y * kTileColumns + t;
  if (t < kTileColumns) partials[blockIdx.x * kCols + c] = total;
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (t == 0) last = atomicAdd(&counters[blockIdx.y], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (t < kTileColumns) out[c] = __float2bfloat16(splits_total(partials, gridDim.x, c));
  if (t == 0) counters[blockIdx.y] = 0;
}

// The splits of a tile are one cluster along x (gridDim.x == the cluster's size).
template <int kLanes, int kUnroll>
__global__ void __launch_bounds__(32 * kLanes)
    tile_cluster(const uint4* x, __nv_bfloat16* out, int rows, int vectors) {
  wait_previous();
  __shared__ float sums[kTileColumns];
  const float total = tile_sum<kLanes, kUnroll>(x, rows, vectors);
  const int t = threadIdx.y * 32 + threadIdx.x;
  if (t < kTileColumns) sums[t] = total;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int blocks = static_cast<int>(cluster.num_blocks());
  const int slice = kTileColumns / blocks;
  const int rank = static_cast<int>(cluster.block_rank());
  if (t < slice) {
    const int c = rank * slice + t;
    float sum = 0.0f;
    for (int q = 0; q < blocks; ++q) sum += cluster.map_shared_rank(sums, q)[c];
    out[blockIdx.y * kTileColumns + c] = __float2bfloat16(sum);
  }
  cluster.sync();  // the peers' shared memory lives until every block has read it
}

// The whole tensor: block b sums vectors [b * 4 * threads, (b + 1) * 4 * threads), then the last
// block sums the block totals in block order.
template <bool kBf16>
__global__ void __launch_bounds__(1024)
    full_held(const uint4* x, long long vectors, float* totals, unsigned* counter, float* out) {
  wait_previous();
  const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const long long base = static_cast<long long>(blockIdx.x) * 4 * threads + t;
  uint4 w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (base + j * threads < vectors) w[j] = x[base + j * threads];
  float lanes[8] = {};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (base + j * threads >= vectors) continue;
    if constexpr (kBf16) {
      add8(lanes, w[j]);
    } else {
      lanes[0] += __uint_as_float(w[j].x), lanes[1] += __uint_as_float(w[j].y);
      lanes[2] += __uint_as_float(w[j].z), lanes[3] += __uint_as_float(w[j].w);
    }
  }
  float acc = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  __shared__ float warp_totals[32];
  __shared__ bool last;
  for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (t % 32 == 0) warp_totals[t / 32] = acc;
  __syncthreads();
  if (t < 32) {
    acc = t < threads / 32 ? warp_totals[t] : 0.0f;
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (t == 0) {
      totals[blockIdx.x] = acc;
      __threadfence();
      last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float sum = 0.0f;
  for (unsigned b = t; b < gridDim.x; b += threads) sum += __ldcg(totals + b);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  __syncthreads();
  if (t % 32 == 0) warp_totals[t / 32] = sum;
  __syncthreads();
  if (t < 32) {
    sum = t < threads / 32 ? warp_totals[t] : 0.0f;
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (t == 0) {
      *out = sum;
      *counter = 0;
    }
  }
}

// A dependent launch, in clusters of `cluster` blocks along x when above 1.
void launch(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, void** args,
            unsigned cluster = 1) {
  experiments::launch_kernel(kernel, grid, block, 0, stream, args, true, cluster);
}

// The column sums' sweep over one set of inputs, partials and counters.
struct Columns {
  cudaStream_t stream;
  Inputs<__nv_bfloat16, __nv_bfloat16> in{stream, true, 11};
  float* partials = nullptr;
  unsigned* counters = nullptr;

  explicit Columns(cudaStream_t s) : stream(s) {
    CHECK(cudaMalloc(&partials, static_cast<size_t>(kMaxSplits) * kCols * 4));
    CHECK(cudaMalloc(&counters, 64 * 4));
    CHECK(cudaMemset(counters, 0, 64 * 4));
  }
  ~Columns() {
    CHECK(cudaFree(partials));
    CHECK(cudaFree(counters));
  }

  // Poisons set 0's outputs, runs once and checks them, then times.
  template <class Launch>
  void time(const char* name, Launch&& one) {
    CHECK(cudaMemsetAsync(in.out[0], 0xff, kCols * 2, stream));
    one(0);
    const bool ok = in.check(0.0079, 2e-5);
    report(name, in.bytes(), experiments::median_launch_us(one, in.sets, 64, stream, true), ok);
  }

  template <int kLanes, int kUnroll>
  void sweep(int splits) {
    const dim3 grid(splits, kCols / kTileColumns), block(32, kLanes);
    int rows = kRows, vectors = kCols / 8;
    char name[96];
    std::snprintf(name, sizeof name, "split %d, %d lanes, unroll %d, finish kernel", splits, kLanes,
                  kUnroll);
    time(name, [&](int s) {
      const uint4* x = in.words(s);
      void* first[] = {&x, &partials, &rows, &vectors};
      launch(reinterpret_cast<const void*>(&tile_partials<kLanes, kUnroll>), grid, block, stream,
             first);
      void* second[] = {&partials, &in.out[s], &splits};
      launch(reinterpret_cast<const void*>(&finish_columns), dim3(kCols / 256), dim3(256), stream,
             second);
    });
    std::snprintf(name, sizeof name, "split %d, %d lanes, unroll %d, last block", splits, kLanes,
                  kUnroll);
    time(name, [&](int s) {
      const uint4* x = in.words(s);
      void* args[] = {&x, &partials, &counters, &in.out[s], &rows, &vectors};
      launch(reinterpret_cast<const void*>(&tile_last_block<kLanes, kUnroll>), grid, block, stream,
             args);
    });
    if (splits > 8) return;  // the portable cluster size
    std::snprintf(name, sizeof name, "split %d, %d lanes, unroll %d, cluster", splits, kLanes,
                  kUnroll);
    time(name, [&](int s) {
      const uint4* x = in.words(s);
      void* args[] = {&x, &in.out[s], &rows, &vectors};
      launch(reinterpret_cast<const void*>(&tile_cluster<kLanes, kUnroll>), grid, block, stream,
             args, static_cast<unsigned>(splits));
    });
  }
};

void columns(cudaStream_t stream) {
  Columns c(stream);
  std::printf("column sums of bfloat16 [%d, %d] (hidden-state-dim0), %d sets, tiles of %d\n", kRows,
              kCols, c.in.sets, kTileColumns);
  c.sweep<16, 16>(8);
  c.sweep<8, 16>(8);
  c.sweep<16, 8>(16);
  c.sweep<8, 16>(16);
  c.sweep<8, 8>(32);
  c.sweep<16, 4>(32);
}

template <bool kBf16>
void full(cudaStream_t stream) {
  Inputs<std::conditional_t<kBf16, __nv_bfloat16, float>, float> in(stream, false, 23);
  long long vectors = in.elements() * (kBf16 ? 2 : 4) / 16;
  float* totals = nullptr;
  unsigned* counter = nullptr;
  CHECK(cudaMalloc(&totals, vectors / 4 / 32 * 4 + 4));
  CHECK(cudaMalloc(&counter, 4));
  CHECK(cudaMemset(counter, 0, 4));
  std::printf("the sum of %s [%d, %d] (%s), %d sets\n", kBf16 ? "bfloat16" : "float32", kRows,
              kCols, kBf16 ? "fp8-per-tensor's size" : "hidden-state-full", in.sets);
  for (int threads : {128, 256, 512, 1024}) {
    const long long blocks = (vectors + 4LL * threads - 1) / (4LL * threads);
    const auto one = [&](int s) {
      const uint4* x = in.words(s);
      void* args[] = {&x, &vectors, &totals, &counter, &in.out[s]};
      launch(reinterpret_cast<const void*>(&full_held<kBf16>), dim3(static_cast<unsigned>(blocks)),
             dim3(threads), stream, args);
    };
    one(0);
    const bool ok = in.check(0.0, 1e-5);
    char name[96];
    std::snprintf(name, sizeof name, "%lld blocks of %d threads, last block", blocks, threads);
    report(name, in.bytes(), experiments::median_launch_us(one, in.sets, 64, stream, true), ok);
  }
  CHECK(cudaFree(totals));
  CHECK(cudaFree(counter));
}

}  // namespace

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  columns(stream);
  full<false>(stream);
  full<true>(stream);
  return 0;
}
