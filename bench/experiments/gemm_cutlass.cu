// Experiment: a dense CUTLASS sm90 GEMM (TMA, WGMMA, warp-specialised persistent kernel) under one
// schedule beside cuBLAS's cublasGemmEx (torch.mm's and F.linear's call: float32 compute,
// reduced-precision split-K reductions off, 32 MiB workspace), bfloat16, on GemmFwdOp's prefill
// and square workloads (manifest/gemm.yaml) with the weight as nn.Linear holds it ([N, K],
// K-major: CUTLASS's column-major B, cuBLAS's op T). The step before #13's own GEMM candidates:
// which schedules win which workloads, so that only those are instantiated. One schedule per
// binary, compiled in parallel by bench/experiments/gemm_sweep.sh (separate macros: nvcc splits a
// -D value at its commas):
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -I. -isystem build/cutlass/include -DKIND=Cooperative -DTILE_M=128 -DTILE_N=256 \
//     -DTILE_K=64 -DCLUSTER_M=2 -DCLUSTER_N=1 bench/experiments/gemm_cutlass.cu -lcublas \
//     -o build/gemm_coop
//
// Each workload (uniform random inputs) is first checked against float64 dot products of 256 random
// entries (outputs poisoned with NaN before the run); then the median time of 15 batches of
// launches cycling through input sets beyond 4x the L2, cuBLAS before and after CUTLASS's swizzles
// 1, 2, 4 and 8, printed as microseconds and TFLOP/s.
#include <cublas_v2.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <random>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/torch_cublas.cuh"

namespace {

using experiments::bf16_to_float;
using experiments::float_to_bf16;

// Cooperative: two consumer warpgroups split one tile; ping-pong: each owns a tile, their main
// loops and epilogues alternate.
struct Cooperative {
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
};
struct Pingpong {
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
};

#ifndef KIND
#define KIND Cooperative
#define TILE_M 128
#define TILE_N 256
#define TILE_K 64
#define CLUSTER_M 2
#define CLUSTER_N 1
#endif
// The tile scheduler: PersistentScheduler (CUTLASS's default: whole output tiles over the SMs) or
// StreamKScheduler (K's iterations shared out over the SMs, partial tiles reduced through a
// workspace), which keeps every SM busy when the output has fewer tiles than the card has SMs.
#ifndef SCHEDULER
#define SCHEDULER PersistentScheduler
#endif
#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

using Element = cutlass::bfloat16_t;
using Tile = cute::Shape<cute::Int<TILE_M>, cute::Int<TILE_N>, cute::Int<TILE_K>>;
using Cluster = cute::Shape<cute::Int<CLUSTER_M>, cute::Int<CLUSTER_N>, cute::_1>;
// -DSWAP_AB: out^T [N, M] = w [N, K] x^T, CUTLASS's A the weight and B the activations, so that
// a few tokens fill the tile's N (WGMMA takes N down to 8) and not 128 rows of M: the tile's
// shared memory is the weight's bytes, not rows of zeros past M.
#ifdef SWAP_AB
using LayoutA = cutlass::layout::RowMajor;     // w [N, K], K-major
using LayoutB = cutlass::layout::ColumnMajor;  // x [M, K], K-major
using LayoutD = cutlass::layout::ColumnMajor;  // out^T [N, M]: out [M, N] row-major
#else
using LayoutA = cutlass::layout::RowMajor;     // x [M, K]
using LayoutB = cutlass::layout::ColumnMajor;  // w [N, K], K-major
using LayoutD = cutlass::layout::RowMajor;     // out [M, N]
#endif
constexpr int kAlignment = 8;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlignment,
    Element, LayoutD, kAlignment, typename KIND::Epilogue,
    cutlass::epilogue::fusion::LinearCombination<Element, float, void, float>>::CollectiveOp;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlignment, Element,
    LayoutB, kAlignment, float, Tile, Cluster,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename Epilogue::SharedStorage))>,
    typename KIND::Kernel>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop,
                                                    Epilogue, cutlass::gemm::SCHEDULER>;
using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

struct Workload {
  const char* label;
  int m, n, k;
};

// GemmFwdOp's prefill and square rows (manifest/gemm.yaml), and the issue's 8192^3; with
// -DSMALL_M its rows of 16 and 128 tokens instead (#13's M <= 128 bar), timed as replayed CUDA
// graphs: at these sizes a host launch (CUTLASS's initialize and run) takes longer than the kernel.
#ifdef SMALL_M
constexpr bool kGraphs = true;
constexpr Workload kWorkloads[] = {
    {"8b-qkv-m1", 1, 6144, 4096},        {"8b-o-m1", 1, 4096, 4096},
    {"8b-down-m1", 1, 4096, 14336},      {"70b-qkv-m16", 16, 10240, 8192},
    {"8b-qkv-m16", 16, 6144, 4096},      {"8b-o-m16", 16, 4096, 4096},
    {"8b-down-m16", 16, 4096, 14336},    {"8b-qkv-m128", 128, 6144, 4096},
    {"8b-o-m128", 128, 4096, 4096},      {"8b-gate_up-m128", 128, 28672, 4096},
    {"8b-down-m128", 128, 4096, 14336},  {"70b-qkv-m128", 128, 10240, 8192},
    {"70b-o-m128", 128, 8192, 8192},     {"70b-gate_up-m128", 128, 57344, 8192},
    {"70b-down-m128", 128, 8192, 28672},
};
#else
constexpr bool kGraphs = false;
constexpr Workload kWorkloads[] = {
    {"square-8192", 8192, 8192, 8192},       {"square-4096", 4096, 4096, 4096},
    {"8b-qkv-m2048", 2048, 6144, 4096},      {"8b-o-m2048", 2048, 4096, 4096},
    {"8b-gate_up-m2048", 2048, 28672, 4096}, {"8b-down-m2048", 2048, 4096, 14336},
    {"70b-qkv-m2048", 2048, 10240, 8192},    {"70b-gate_up-m2048", 2048, 57344, 8192},
    {"70b-down-m2048", 2048, 8192, 28672},   {"8b-gate_up-m128", 128, 28672, 4096},
    {"70b-gate_up-m128", 128, 57344, 8192},
};
#endif

struct Set {
  __nv_bfloat16 *x, *w, *out;
};

// K's splits (argv[1], default 1: CUTLASS's heuristic decomposition for the stream-K scheduler);
// more than 1 forces split-K with that many splits.
int g_splits = 1;

typename Adapter::Arguments arguments(const Workload& wl, const Set& s, int sm_count, int swizzle) {
  // Row-major x and out, and w [N, K]: each operand's rows are contiguous (the K or N extent is the
  // leading stride), one batch.
  const auto rows = [](std::int64_t leading, std::int64_t size) {
    return cute::make_stride(leading, cute::Int<1>{}, size);
  };
#ifdef SWAP_AB
  typename Adapter::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {wl.n, wl.m, wl.k, 1},
      {reinterpret_cast<const Element*>(s.w), rows(wl.k, std::int64_t{wl.n} * wl.k),
       reinterpret_cast<const Element*>(s.x), rows(wl.k, std::int64_t{wl.m} * wl.k)},
      {{1.0f, 0.0f},
       nullptr,
       cute::make_stride(cute::Int<1>{}, std::int64_t{wl.n}, std::int64_t{wl.m} * wl.n),
       reinterpret_cast<Element*>(s.out),
       cute::make_stride(cute::Int<1>{}, std::int64_t{wl.n}, std::int64_t{wl.m} * wl.n)}};
#else
  typename Adapter::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {wl.m, wl.n, wl.k, 1},
      {reinterpret_cast<const Element*>(s.x), rows(wl.k, std::int64_t{wl.m} * wl.k),
       reinterpret_cast<const Element*>(s.w), rows(wl.k, std::int64_t{wl.n} * wl.k)},
      {{1.0f, 0.0f},
       nullptr,
       rows(wl.n, std::int64_t{wl.m} * wl.n),
       reinterpret_cast<Element*>(s.out),
       rows(wl.n, std::int64_t{wl.m} * wl.n)}};
#endif
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = sm_count;
  args.scheduler.max_swizzle_size = swizzle;
  if constexpr (requires { args.scheduler.decomposition_mode; }) {
    if (g_splits > 1) {
      args.scheduler.splits = g_splits;
      args.scheduler.decomposition_mode = cutlass::gemm::kernel::detail::DecompositionMode::SplitK;
    }
  }
  return args;
}

void run_cutlass(Adapter& gemm, const typename Adapter::Arguments& args, void* workspace,
                 cudaStream_t stream) {
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "CUTLASS cannot implement the call\n");
    std::exit(1);
  }
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess ||
      gemm.run(stream) != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "CUTLASS launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    std::exit(1);
  }
}

// out = x w^T in cuBLAS's column-major terms: out^T [N, M] = (w [N, K] row-major, i.e. K x N
// column-major, transposed) times x^T [K, M].
void run_cublas(cublasHandle_t handle, const Workload& wl, const Set& s) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, wl.n, wl.m, wl.k, &one, s.w, CUDA_R_16BF,
                      wl.k, s.x, CUDA_R_16BF, wl.k, &zero, s.out, CUDA_R_16BF, wl.n,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// 256 random entries of set 0's output against float64 dot products; returns the failures.
int check(const Workload& wl, const std::vector<__nv_bfloat16>& x,
          const std::vector<__nv_bfloat16>& w, const Set& s, std::mt19937_64& rng) {
  std::vector<__nv_bfloat16> out(static_cast<std::size_t>(wl.m) * wl.n);
  CHECK(cudaMemcpy(out.data(), s.out, out.size() * 2, cudaMemcpyDeviceToHost));
  int failures = 0;
  for (int t = 0; t < 256; ++t) {
    const std::size_t i = rng() % wl.m, j = rng() % wl.n;
    double ref = 0.0, magnitude = 0.0;
    for (std::size_t kk = 0; kk < static_cast<std::size_t>(wl.k); ++kk) {
      const double p =
          static_cast<double>(bf16_to_float(x[i * wl.k + kk])) * bf16_to_float(w[j * wl.k + kk]);
      ref += p;
      magnitude += std::fabs(p);
    }
    const double got = bf16_to_float(out[i * wl.n + j]);
    // One bfloat16 rounding of the result, and float32 accumulation.
    if (!(std::fabs(got - ref) <= 0.0079 * std::fabs(ref) + 1e-5 * magnitude)) ++failures;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_splits = std::atoi(argv[1]);
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const cublasHandle_t handle = experiments::torch_like_cublas(stream);
  int sm_count = 0;
  CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
#ifdef SWAP_AB
  const char* operands = "swap AB";
#else
  const char* operands = "";
#endif
  std::printf("schedule %s %dx%dx%d cluster %dx%d %s splits %d %s\n", STRINGIFY(KIND), TILE_M,
              TILE_N, TILE_K, CLUSTER_M, CLUSTER_N, STRINGIFY(SCHEDULER), g_splits, operands);
  std::printf("%-18s | %-7s %-7s | %-22s | %s\n", "workload", "check", "cublas",
              "cutlass swizzle 1/2/4/8 us", "best TFLOP/s: cutlass / cublas (ratio)");
  std::mt19937_64 rng(11);
  // Uniform in [-1, 1): the largest weights are half a billion elements, too many for
  // std::normal_distribution to draw quickly.
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto uniform = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<float>(static_cast<std::int64_t>(state >> 40) - (1 << 23)) / (1 << 23);
  };
  Adapter gemm;
  for (const Workload& wl : kWorkloads) {
#ifdef SWAP_AB
    if (wl.m > 16) continue;  // the swapped operands are for a few tokens
#endif
    const std::size_t x_elems = static_cast<std::size_t>(wl.m) * wl.k;
    const std::size_t w_elems = static_cast<std::size_t>(wl.n) * wl.k;
    const std::size_t out_elems = static_cast<std::size_t>(wl.m) * wl.n;
    const std::size_t set_bytes = 2 * (x_elems + w_elems + out_elems);
    const int sets = static_cast<int>(std::max<std::size_t>(2, (200u << 20) / set_bytes + 1));
    std::vector<__nv_bfloat16> hx(x_elems), hw(w_elems);
    for (auto& v : hx) v = float_to_bf16(uniform());
    for (auto& v : hw) v = float_to_bf16(uniform());
    std::vector<Set> device_sets(static_cast<std::size_t>(sets));
    for (Set& s : device_sets) {
      CHECK(cudaMalloc(&s.x, x_elems * 2));
      CHECK(cudaMalloc(&s.w, w_elems * 2));
      CHECK(cudaMalloc(&s.out, out_elems * 2));
      CHECK(cudaMemcpy(s.x, hx.data(), x_elems * 2, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(s.w, hw.data(), w_elems * 2, cudaMemcpyHostToDevice));
    }
    const std::size_t workspace_bytes =
        Adapter::get_workspace_size(arguments(wl, device_sets[0], sm_count, 8));
    void* workspace = nullptr;
    CHECK(cudaMalloc(&workspace, std::max<std::size_t>(workspace_bytes, 256)));

    // Correctness of both, on poisoned outputs.
    CHECK(cudaMemset(device_sets[0].out, 0xff, out_elems * 2));  // NaN in bfloat16
    run_cutlass(gemm, arguments(wl, device_sets[0], sm_count, 1), workspace, stream);
    CHECK(cudaStreamSynchronize(stream));
    const int cutlass_failures = check(wl, hx, hw, device_sets[0], rng);
    CHECK(cudaMemset(device_sets[0].out, 0xff, out_elems * 2));
    run_cublas(handle, wl, device_sets[0]);
    CHECK(cudaStreamSynchronize(stream));
    const int cublas_failures = check(wl, hx, hw, device_sets[0], rng);

    // A graph replays enough launches that its own launch does not count.
    const int per_batch = kGraphs ? std::max(64, sets) : std::max(3, sets);
    const auto time_cublas = [&] {
      return experiments::median_launch_us(
          [&](int i) { run_cublas(handle, wl, device_sets[static_cast<std::size_t>(i)]); }, sets,
          per_batch, stream, kGraphs);
    };
    const double cublas_before = time_cublas();
    double best = 1e30;
    std::printf("%-18s | %3d/%3d %7.1f |", wl.label, cutlass_failures, cublas_failures,
                cublas_before);
    for (int swizzle : {1, 2, 4, 8}) {
      const double us = experiments::median_launch_us(
          [&](int i) {
            run_cutlass(gemm,
                        arguments(wl, device_sets[static_cast<std::size_t>(i)], sm_count, swizzle),
                        workspace, stream);
          },
          sets, per_batch, stream, kGraphs);
      best = std::min(best, us);
      std::printf(" %7.1f", us);
    }
    const double cublas_us = 0.5 * (cublas_before + time_cublas());
    const double flop = 2.0 * wl.m * wl.n * static_cast<double>(wl.k);
    std::printf(" | %6.1f / %6.1f (%.3fx)\n", flop / best * 1e-6, flop / cublas_us * 1e-6,
                cublas_us / best);
    std::fflush(stdout);
    for (Set& s : device_sets) {
      CHECK(cudaFree(s.x));
      CHECK(cudaFree(s.w));
      CHECK(cudaFree(s.out));
    }
    CHECK(cudaFree(workspace));
  }
  return 0;
}
