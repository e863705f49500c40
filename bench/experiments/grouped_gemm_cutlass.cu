// Experiment: the CUTLASS grouped GEMM (kernels/gemm/cuda/grouped_gemm_cutlass.cuh) under one
// schedule, timed on GroupedGemmFwdOp's workloads (manifest/gemm.yaml) with group ends drawn as
// `tileops bench` draws them (Note [Random group ends] in tools/workloads/workload_cases.cpp).
// One schedule per binary, so that a sweep compiles its schedules in parallel (separate macros:
// nvcc splits a -D value at its commas):
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -I. -Iinclude -Isrc -isystem build/cutlass/include \
//     -DKIND=Cooperative -DTILE_M=128 -DTILE_N=128 -DTILE_K=64 -DCLUSTER_M=1 -DCLUSTER_N=2 \
//     bench/experiments/grouped_gemm_cutlass.cu -o build/gg_coop_128x128_1x2
//   build/gg_coop_128x128_1x2 [--column-major]
//
// Prints one line per workload: the median time (us) over 15 batches of 3 launches (weights of
// gigabytes come from HBM whatever the order) and TFLOP/s.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/gemm/cuda/grouped_gemm_cutlass.cuh"

namespace tileops::cuda::detail {
void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudaGetErrorString(status));
  std::exit(1);
}
}  // namespace tileops::cuda::detail

namespace {

using namespace tileops::kernels::cuda;
using namespace tileops::kernels::cuda::cutlass_grouped;

#ifndef KIND
#define KIND Cooperative
#define TILE_M 128
#define TILE_N 128
#define TILE_K 64
#define CLUSTER_M 1
#define CLUSTER_N 2
#endif
using Schedule = KIND<TILE_M, TILE_N, TILE_K, CLUSTER_M, CLUSTER_N>;
#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

struct Workload {
  const char* label;
  std::int64_t m, k, n, e;
};

// Sorted uniform cut points in [0, M], a quarter of the groups emptied, the last end M.
std::vector<std::int32_t> group_ends(std::int64_t m, std::int64_t e, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> cut(0, m);
  std::vector<std::int64_t> ends(static_cast<std::size_t>(e));
  for (auto& v : ends) v = cut(rng);
  std::sort(ends.begin(), ends.end());
  std::uniform_int_distribution<int> quarter(0, 3);
  for (std::size_t g = 1; g < ends.size(); ++g)
    if (quarter(rng) == 0) ends[g] = ends[g - 1];
  ends.back() = m;
  return {ends.begin(), ends.end()};
}

__global__ void fill_random(__nv_bfloat16* p, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::uint64_t h = (static_cast<std::uint64_t>(i) + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    const float u = static_cast<float>(h & 0xffffff) / 16777216.0f - 0.5f;
    p[i] = __float2bfloat16(u == 0.0f ? 0.25f : u);
  }
}

template <bool kColumnMajor>
void run(const Workload& wl) {
  using G = GroupedGemm<__nv_bfloat16, kColumnMajor, Schedule>;
  int device = 0, sms = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  __nv_bfloat16 *x, *w, *out;
  std::int32_t* offsets;
  CHECK(cudaMalloc(&x, wl.m * wl.k * 2));
  CHECK(cudaMalloc(&w, wl.e * wl.k * wl.n * 2));
  CHECK(cudaMalloc(&out, wl.m * wl.n * 2));
  CHECK(cudaMalloc(&offsets, wl.e * 4));
  fill_random<<<1024, 256>>>(x, wl.m * wl.k, 1);
  fill_random<<<1024, 256>>>(w, wl.e * wl.k * wl.n, 2);
  std::mt19937_64 rng(7);
  const std::vector<std::int32_t> ends = group_ends(wl.m, wl.e, rng);
  CHECK(cudaMemcpy(offsets, ends.data(), wl.e * 4, cudaMemcpyHostToDevice));
  const std::size_t bytes = workspace_bytes<G>(wl.e, device, sms);
  void* workspace;
  CHECK(cudaMalloc(&workspace, bytes));
  prepare<G>();
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // w [E, K, N] row-major, or the transposed view of [E, N, K]: the leading dimension is N or K.
  const GroupedGemmTensors t{x,    w,    offsets, out,         wl.m,
                             wl.n, wl.k, wl.e,    wl.k * wl.n, kColumnMajor ? wl.k : wl.n};
  const double us = experiments::median_launch_us(
      [&](int) { launch<G>(t, workspace, device, sms, nullptr, stream); }, 1, 3, stream);
  const double tflops = 2.0 * wl.m * wl.n * wl.k / (us * 1e-6) / 1e12;
  std::printf("%-24s %-4s %10.2f us %7.1f TFLOP/s  %s %dx%dx%d cluster %dx%d\n", wl.label,
              kColumnMajor ? "w^T" : "w", us, tflops, STRINGIFY(KIND), TILE_M, TILE_N, TILE_K,
              CLUSTER_M, CLUSTER_N);
  CHECK(cudaFree(x));
  CHECK(cudaFree(w));
  CHECK(cudaFree(out));
  CHECK(cudaFree(offsets));
  CHECK(cudaFree(workspace));
  CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  const bool column_major = argc > 1 && std::strcmp(argv[1], "--column-major") == 0;
  const Workload workloads[] = {
      {"dsv3-up-t4096", 32768, 7168, 2048, 256},
      {"dsv3-down-t4096", 32768, 2048, 7168, 256},
      {"dsv3-up-t64", 512, 7168, 2048, 256},
      {"mixtral-gate_up-t2048", 4096, 4096, 28672, 8},
  };
  for (const Workload& wl : workloads) column_major ? run<true>(wl) : run<false>(wl);
  return 0;
}
