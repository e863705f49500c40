// An experiment, not part of the library: decode rows of the norm family (Note [Few rows] in
// kernels/norm/cuda/norm.cuh) replayed back to back from a CUDA graph with dependent launch (Note
// [Dependent launch] in src/cuda/dependent_launch.hpp): the library's few-rows kernel in clusters
// of 1 to 8 blocks, beside this file's prototypes: one block reading its row into registers, with
// and without its operands prefetched into L2 before the dependent wait (Note [Prefetch before
// the wait] in kernels/common/cuda/dependent_launch.cuh), the row split over a cluster, and a
// floor that loads and stores without reducing. Inputs rotate beyond the L2 as `tileops bench`
// rotates them; one shape also with the operands laid out as `tileops bench` lays them out.
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/dependent_launch.cu -o build/dependent_launch && build/dependent_launch
//
// Each variant's output is checked against a float64 reference (in bfloat16 steps) before it is
// timed.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/norm_rows.cuh"
#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/norm/cuda/norm.cuh"
#include "kernels/norm/cuda/norm_few_rows.cuh"

using namespace tileops::kernels::cuda;
using namespace experiments::norm_rows;

namespace {

__global__ void empty_kernel() { begin_dependent_kernel(); }

// Launches with dependent launch when `dependent`, in clusters of `cluster` blocks when above 1.
void launch_with(const void* kernel, dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                 bool dependent, void** args, int cluster = 1) {
  experiments::launch_kernel(kernel, grid, block, smem, stream, args, dependent,
                             static_cast<unsigned>(cluster));
}

// What a kernel may do before griddepcontrol.wait: ask for its cold operands in L2. A prefetch
// changes no memory, so it is safe even while the previous kernel writes the same lines (L2 is
// where their writes land); it overlaps the DRAM latency with the previous kernel's run.
enum Prefetch { kNoPrefetch, kPrefetchWeights, kPrefetchAll };

__device__ __forceinline__ void prefetch_l2(const void* p, long long bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p),
               "r"(static_cast<unsigned>(bytes))
               : "memory");
}

// Thread 0 prefetches `bytes` of the weights (and the bias) and, with kPrefetchAll, of the row
// (and the residual) at `row`, starting `first` bytes in.
template <NormKind kKind, Prefetch kPrefetch>
__device__ __forceinline__ void prefetch_operands(const NormParams& p, long long row,
                                                  long long first, long long bytes) {
  if (kPrefetch == kNoPrefetch || threadIdx.x != 0) return;
  const char* weight = static_cast<const char*>(p.weight) + first;
  prefetch_l2(weight, bytes);
  if (kKind == NormKind::kLayer) prefetch_l2(static_cast<const char*>(p.bias) + first, bytes);
  if (kPrefetch == kPrefetchAll) {
    const long long at = row * p.n * static_cast<long long>(sizeof(T)) + first;
    prefetch_l2(static_cast<const char*>(p.x) + at, bytes);
    if (kKind == NormKind::kFusedAddRMS)
      prefetch_l2(static_cast<const char*>(p.residual) + at, bytes);
  }
}

// A decode row read straight into registers: kVpt vectors of x (and the residual, weight and
// bias) per thread, all loads issued before the first reduction; no copy engine, no barrier in
// shared memory.
template <NormKind kKind, int kVpt, Prefetch kPrefetch = kNoPrefetch>
__global__ void __launch_bounds__(1024) direct_norm_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  const int n_vec = static_cast<int>(p.n / kN);
  const long long offset = static_cast<long long>(blockIdx.x) * p.n;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  const float inv_n = 1.0f / static_cast<float>(p.n);
  prefetch_operands<kKind, kPrefetch>(p, blockIdx.x, 0, p.n * static_cast<long long>(sizeof(T)));
  begin_dependent_kernel();
  V a[kVpt], w[kVpt], b[kVpt];
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int v = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
    if (v < n_vec) {
      a[k] = load_vec_coherent(static_cast<const T*>(p.x) + offset + v * kN);
      w[k] = load_vec(weight + v * kN);
      if (kKind == NormKind::kLayer) b[k] = load_vec(bias + v * kN);
      if (kKind == NormKind::kFusedAddRMS) {
        T* residual = static_cast<T*>(p.residual) + offset + v * kN;
        const V r = load_vec_coherent(residual);
#pragma unroll
        for (int e = 0; e < kN; ++e)
          a[k].v[e] = from_float<T>(to_float(a[k].v[e]) + to_float(r.v[e]));
      }
    }
  }
  RowScale rs{0.0f, 0.0f};
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int v = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
    if (v < n_vec) {
      if (kKind == NormKind::kFusedAddRMS)
        store_vec(static_cast<T*>(p.residual) + offset + v * kN, a[k]);
#pragma unroll
      for (int e = 0; e < kN; ++e) {
        const float f = to_float(a[k].v[e]);
        sum += kKind == NormKind::kLayer ? f : f * f;
      }
    }
  }
  if constexpr (kKind == NormKind::kLayer) {
    rs.mean = block_sum(sum, storage) * inv_n;
    float centered = 0.0f;
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      const int v = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
      if (v < n_vec)
#pragma unroll
        for (int e = 0; e < kN; ++e) {
          const float d = to_float(a[k].v[e]) - rs.mean;
          centered += d * d;
        }
    }
    rs.scale = rsqrtf(block_sum(centered, storage) * inv_n + p.eps);
  } else {
    rs.scale = rsqrtf(block_sum(sum, storage) * inv_n + p.eps);
  }
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int v = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
    if (v < n_vec)
      store_vec_streaming(static_cast<T*>(p.out) + offset + v * kN,
                          normalized(a[k], w[k], b[k], true, kKind == NormKind::kLayer, rs));
  }
}

// A decode row split over a cluster of kCluster blocks (one per multiprocessor), each holding
// n / kCluster elements, one vector per thread, the blocks' partial sums exchanged through
// distributed shared memory (the library's cluster_sum, norm_few_rows.cuh). A first cluster
// barrier, split into arrive (at the start) and wait (before the first remote write), makes sure
// every block of the cluster is running before its shared memory is written.
template <NormKind kKind, int kCluster, Prefetch kPrefetch>
__global__ void __launch_bounds__(1024) cluster_norm_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  __shared__ float slots[2][kCluster];
  const unsigned rank = cooperative_groups::this_cluster().block_rank();
  const long long row = blockIdx.x / kCluster;
  const int slice = static_cast<int>(p.n / kN / kCluster);  // blockDim.x
  const int v = static_cast<int>(rank) * slice + static_cast<int>(threadIdx.x);
  const long long at = row * p.n + static_cast<long long>(v) * kN;
  const float inv_n = 1.0f / static_cast<float>(p.n);
  prefetch_operands<kKind, kPrefetch>(p, row, static_cast<long long>(rank) * slice * 16,
                                      slice * 16LL);
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  begin_dependent_kernel();
  V a = load_vec_coherent(static_cast<const T*>(p.x) + at);
  const V w = load_vec(static_cast<const T*>(p.weight) + v * kN);
  V b{};
  if (kKind == NormKind::kLayer) b = load_vec(static_cast<const T*>(p.bias) + v * kN);
  if (kKind == NormKind::kFusedAddRMS) {
    T* residual = static_cast<T*>(p.residual) + at;
    const V r = load_vec_coherent(residual);
#pragma unroll
    for (int e = 0; e < kN; ++e) a.v[e] = from_float<T>(to_float(a.v[e]) + to_float(r.v[e]));
    store_vec(residual, a);
  }
  float sum = 0.0f;
#pragma unroll
  for (int e = 0; e < kN; ++e) {
    const float f = to_float(a.v[e]);
    sum += kKind == NormKind::kLayer ? f : f * f;
  }
  const float block_total = block_sum(sum, storage);
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  RowScale rs{0.0f, 0.0f};
  const float total = cluster_sum<kCluster>(block_total, slots[0]);
  if constexpr (kKind == NormKind::kLayer) {
    rs.mean = total * inv_n;
    float centered = 0.0f;
#pragma unroll
    for (int e = 0; e < kN; ++e) {
      const float d = to_float(a.v[e]) - rs.mean;
      centered += d * d;
    }
    rs.scale =
        rsqrtf(cluster_sum<kCluster>(block_sum(centered, storage), slots[1]) * inv_n + p.eps);
  } else {
    rs.scale = rsqrtf(total * inv_n + p.eps);
  }
  store_vec_streaming(static_cast<T*>(p.out) + at,
                      normalized(a, w, b, true, kKind == NormKind::kLayer, rs));
}

// A floor, wrong by design: the direct kernel's loads and stores (x * w) with no reduction.
template <Prefetch kPrefetch>
__global__ void __launch_bounds__(1024) floor_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  const long long at = static_cast<long long>(blockIdx.x) * p.n + threadIdx.x * kN;
  prefetch_operands<NormKind::kRMS, kPrefetch>(p, blockIdx.x, 0,
                                               p.n * static_cast<long long>(sizeof(T)));
  begin_dependent_kernel();
  const V a = load_vec_coherent(static_cast<const T*>(p.x) + at);
  const V w = load_vec(static_cast<const T*>(p.weight) + threadIdx.x * kN);
  store_vec_streaming(static_cast<T*>(p.out) + at,
                      normalized(a, w, w, true, false, RowScale{0.0f, 1.0f}));
}

const char* kind_name(NormKind k) {
  return k == NormKind::kRMS ? "rms" : k == NormKind::kLayer ? "layer" : "fused_add_rms";
}

void report(const char* kind, const char* variant, const Shape& s, bool dependent, double us,
            double err, int threads) {
  std::printf("%-14s %-22s %-4s [%6lld, %5d] %8.2f us  err %.2f  (%d thr)\n", kind, variant,
              dependent ? "PDL" : "-", s.rows, s.n, us, err, threads);
}

int sets_for(const Shape& s) {
  const double set_bytes = 5.0 * s.rows * s.n * sizeof(T);
  return std::min(4096, std::max(2, static_cast<int>(4 * 50e6 / set_bytes) + 1));
}

// Graph replays of back-to-back launches cycling through the sets.
template <class Launch>
double time_us(int sets, cudaStream_t stream, Launch&& launch) {
  return experiments::median_launch_us(launch, sets, std::max(200, 2 * sets), stream,
                                       /*graph=*/true);
}

// Launches `kernel` (`cluster` blocks per row, `threads` threads each, `smem` bytes of dynamic
// shared memory) once and checks set 0 against the reference, then times it; prints a row and
// returns the time.
template <NormKind kKind>
double measure(const char* variant, const void* kernel, int threads, int smem, const Shape& s,
               Buffers& b, int sets, cudaStream_t stream, int cluster = 1) {
  auto run = [&](int set) {
    NormParams p = params_of(s, b, set);
    void* args[] = {&p};
    launch_with(kernel, dim3(static_cast<unsigned>(s.rows * cluster)), dim3(threads), smem, stream,
                true, args, cluster);
  };
  reset_residual(b);
  run(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check<kKind>(s, b);
  const double us = time_us(sets, stream, run);
  report(kind_name(kKind), variant, s, true, us, err, threads * cluster);
  return us;
}

// The library's few-rows kernel (norm_few_rows.cuh) in clusters of `cluster` blocks.
template <NormKind kKind>
void library(const Shape& s, Buffers& b, int sets, cudaStream_t stream, int cluster) {
  const int slice = (s.n / 8 + cluster - 1) / cluster;
  if (slice > 1024) return;
  char name[64];
  std::snprintf(name, sizeof name, "library cluster %d", cluster);
  const void* kernels[] = {reinterpret_cast<const void*>(norm_few_rows_kernel<kKind, T, 1>),
                           reinterpret_cast<const void*>(norm_few_rows_kernel<kKind, T, 2>),
                           reinterpret_cast<const void*>(norm_few_rows_kernel<kKind, T, 4>),
                           reinterpret_cast<const void*>(norm_few_rows_kernel<kKind, T, 8>)};
  measure<kKind>(name,
                 kernels[cluster == 1   ? 0
                         : cluster == 2 ? 1
                         : cluster == 4 ? 2
                                        : 3],
                 (slice + 31) / 32 * 32, 0, s, b, sets, stream, cluster);
}

const char* prefetch_name(Prefetch p) {
  return p == kNoPrefetch ? "" : p == kPrefetchWeights ? " +pf w" : " +pf all";
}

// This file's register kernel, kVpt vectors a thread.
template <NormKind kKind, int kVpt, Prefetch kPrefetch>
void direct(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  char name[64];
  std::snprintf(name, sizeof name, "direct %d vec%s", kVpt, prefetch_name(kPrefetch));
  measure<kKind>(name, reinterpret_cast<const void*>(direct_norm_kernel<kKind, kVpt, kPrefetch>),
                 s.n / 8 / kVpt, 0, s, b, sets, stream);
}

// The row split over a cluster of kCluster blocks.
template <NormKind kKind, int kCluster, Prefetch kPrefetch>
void clustered(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  const int slice = s.n / 8 / kCluster;
  if (slice < 32 || slice > 1024 || slice % 32 != 0) return;
  char name[64];
  std::snprintf(name, sizeof name, "cluster %d%s", kCluster, prefetch_name(kPrefetch));
  measure<kKind>(name,
                 reinterpret_cast<const void*>(cluster_norm_kernel<kKind, kCluster, kPrefetch>),
                 slice, 0, s, b, sets, stream, kCluster);
}

template <Prefetch kPrefetch>
void floor_row(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  if (s.n / 8 > 1024) return;
  char name[64];
  std::snprintf(name, sizeof name, "floor (no sum)%s", prefetch_name(kPrefetch));
  measure<NormKind::kRMS>(name, reinterpret_cast<const void*>(floor_kernel<kPrefetch>), s.n / 8, 0,
                          s, b, sets, stream);
}

template <NormKind kKind>
void variants(const Shape& s, Buffers& b, int sets, cudaStream_t stream) {
  for (int cluster : {1, 2, 4, 8}) library<kKind>(s, b, sets, stream, cluster);
  if (s.n / 8 <= 1024) direct<kKind, 1, kNoPrefetch>(s, b, sets, stream);
  direct<kKind, 2, kNoPrefetch>(s, b, sets, stream);
  direct<kKind, 2, kPrefetchWeights>(s, b, sets, stream);
  direct<kKind, 2, kPrefetchAll>(s, b, sets, stream);
  clustered<kKind, 2, kNoPrefetch>(s, b, sets, stream);
  clustered<kKind, 4, kNoPrefetch>(s, b, sets, stream);
  clustered<kKind, 8, kNoPrefetch>(s, b, sets, stream);
  clustered<kKind, 4, kPrefetchWeights>(s, b, sets, stream);
  clustered<kKind, 4, kPrefetchAll>(s, b, sets, stream);
  clustered<kKind, 8, kPrefetchAll>(s, b, sets, stream);
}

}  // namespace

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (bool dependent : {false, true}) {
    auto run = [&](int) {
      launch_with(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(32), 0, stream,
                  dependent, nullptr);
    };
    report("empty", "empty kernel", Shape{1, 0}, dependent, time_us(2, stream, run), 0, 32);
  }
  // Every row with dependent launch. Each shape twice: each set's operands allocated one after
  // another, then each operand's sets in a pool of its own, as `tileops bench` lays them out.
  for (const Shape s : {Shape{1, 4096}, Shape{1, 8192}, Shape{1, 16384}, Shape{32, 4096}}) {
    const int sets = sets_for(s);
    for (bool pooled : {false, true}) {
      std::printf("-- %s\n", pooled ? "pooled (as tileops bench)" : "per-set allocations");
      Buffers b = pooled ? make_pooled(s, sets) : make(s, sets);
      if (pooled) {
        library<NormKind::kRMS>(s, b, sets, stream, 4);
        direct<NormKind::kRMS, 2, kNoPrefetch>(s, b, sets, stream);
      } else {
        floor_row<kNoPrefetch>(s, b, sets, stream);
        floor_row<kPrefetchAll>(s, b, sets, stream);
        variants<NormKind::kRMS>(s, b, sets, stream);
        variants<NormKind::kLayer>(s, b, sets, stream);
        variants<NormKind::kFusedAddRMS>(s, b, sets, stream);
      }
      release(b);
    }
  }
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
