// Experiment: the decode GEMM (kernels/gemm/cuda/decode_gemm.cuh, Note [Decode GEMM]) and the
// streamed decode GEMM on CUDA cores (decode_stream.cuh, Note [Streamed decode GEMM]) and on tensor
// cores (decode_stream_mma.cuh) in every configuration swept, each launched as a dependent kernel,
// beside cuBLAS's cublasGemmEx (torch.mm's call: float32 compute, reduced-precision split-K
// reductions off, 32 MiB workspace) on GemmFwdOp's decode workloads (manifest/gemm.yaml), b the
// transposed view of an nn.Linear weight, weights rotated over more than 4x the L2, each timing a
// replayed CUDA graph.
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude -Isrc \
//     bench/experiments/decode_gemm.cu -lcublas -o build/decode_gemm && build/decode_gemm
//
// Checks every configuration against a float64 product of 64 random columns first, then prints
// one line per workload: microseconds and the weight's GB/s for cuBLAS and each configuration.
// Arguments: the rows to time (default 1 4 16); DECODE_WORKLOADS (labels, space-separated) keeps
// those workloads only. A configuration that does not serve a call
// (rows, shared memory) is shown n/a.
#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/decode_stream_mma.cuh"
#include "bench/experiments/harness.cuh"
#include "bench/experiments/torch_cublas.cuh"
#include "kernels/gemm/cuda/decode_gemm.cuh"
#include "kernels/gemm/cuda/decode_stream.cuh"

namespace {

using namespace tileops::kernels::cuda;
using experiments::bf16_to_float;
using experiments::float_to_bf16;

struct Workload {
  const char* label;
  std::int64_t k, n;
};

constexpr Workload kWorkloads[] = {
    {"8b-qkv", 4096, 6144},       {"8b-o", 4096, 4096},      {"8b-gate_up", 4096, 28672},
    {"8b-down", 14336, 4096},     {"70b-qkv", 8192, 10240},  {"70b-o", 8192, 8192},
    {"70b-gate_up", 8192, 57344}, {"70b-down", 28672, 8192}, {"odd-n", 4096, 4100},
};

// The configurations swept, by kind:
//   - decode: the library's decode kernel, column tiles a block (x) and steps in flight a warp (y);
//   - streamed: decode_stream.cuh with a in shared memory and 8 vectors in flight a lane, KB a
//     stage (x), stages a warp (y), warps a block; `idle` the same without the product (nothing
//     checked): what its copies alone reach;
//   - mma: decode_stream_mma.cuh, k a slice (x), stages a warp (y), warps a block, steps in flight
//     a warp (unroll), split K or whole 8-column groups a block (w).
enum class Kind { kDecode, kStreamed, kIdle, kMma };
struct Config {
  Kind kind;
  int x, y, warps = 8, unroll = 4;
  bool whole_groups = false;  // mma: each block whole 8-column groups (no split K)
  int group = 1;              // streamed: warps sharing their stages (y stages a group)
  bool register_a = false;    // streamed, one row, register_a_fits: a held in registers (r)
};
// The tensor-core streamed shapes (kMma) lost to every other kernel at every row count, and more
// or smaller stages or 12 warps slowed the CUDA-core streamed kernel
// (bench/results/2026-12-04-h200-streamed-decode-gemm.md, "Tensor cores", "Stages and warps");
// launch_mma_if and the other launch_stream_if instances still serve them when listed here. This
// sweep asks whether more warps reading the same stages (groups of 2 or 3 warps, g) help.
// This sweep asks whether a lane holding its vectors of a's one row as float32 in registers
// (K within a stage: the same vectors in every column) shortens the product (r); it did, in pairs
// (bench/results/2026-12-04-h200-decode-a-in-registers.md, which also has the variants removed
// since: the stage released before the product, three stages, one stage).
constexpr Config kConfigs[] = {{Kind::kDecode, 1, 4},
                               {Kind::kDecode, 2, 2},
                               {Kind::kStreamed, 8, 2, 16, 4, false, 2},
                               {Kind::kStreamed, 8, 2, 16, 4, false, 2, true},
                               {Kind::kStreamed, 8, 2, 8, 4, false, 1, true},
                               {Kind::kStreamed, 8, 2, 16, 4, false, 4, true},
                               {Kind::kIdle, 8, 2, 8}};

char kind_letter(Kind kind) {
  return kind == Kind::kDecode     ? 'd'
         : kind == Kind::kStreamed ? 's'
         : kind == Kind::kIdle     ? 'i'
                                   : 'm';
}

int sm_count() {
  static const int sms = [] {
    int n = 0;
    CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0));
    return n;
  }();
  return sms;
}

constexpr int kMostShared = 227 * 1024;

// The mma kernel's split-K workspace and counters for the current workload, zero between calls.
float* g_work = nullptr;
unsigned* g_arrivals = nullptr;

template <int kTiles, int kUnroll>
bool launch_decode_if(const Config& c, DecodeGemmProblem p, cudaStream_t stream) {
  if (c.kind != Kind::kDecode || c.x != kTiles || c.y != kUnroll) return false;
  const void* kernel =
      p.m <= 8
          ? reinterpret_cast<const void*>(decode_gemm_kernel<__nv_bfloat16, kTiles, kUnroll, false>)
          : reinterpret_cast<const void*>(decode_gemm_kernel<__nv_bfloat16, kTiles, kUnroll, true>);
  void* args[] = {&p};
  experiments::launch_kernel(kernel,
                             dim3(static_cast<unsigned>((p.n + 8 * kTiles - 1) / (8 * kTiles))),
                             dim3(decode_gemm::kThreads), 0, stream, args);
  return true;
}

// The streamed kernel of kRows rows (0: idle), or false where it does not serve the call.
template <int kRows, int kStageKb = 8, int kWarps = 8, int kGroup = 1, int kUnroll = 0,
          bool kRegisterA = false>
bool launch_stream_if(const Config& c, DecodeGemmProblem p, cudaStream_t stream) {
  constexpr int kVectors = kUnroll > 0 ? kUnroll : kRows == 0 ? 4 : 8;
  constexpr bool kSharedA = kRows > 0 && !kRegisterA;
  constexpr int kStageBytes = kStageKb * 1024;
  if (c.kind != (kRows == 0 ? Kind::kIdle : Kind::kStreamed) || c.x != kStageKb ||
      c.warps != kWarps || c.group != kGroup || (kUnroll > 0 && c.unroll != kUnroll) ||
      c.register_a != kRegisterA ||
      (kRegisterA && !decode_stream::register_a_fits(p.k, kStageBytes / 2, kWarps / kGroup)) ||
      (kRows > 0 && (p.m > kRows || (kRows > 1 && p.m == 1))))
    return false;
  const auto kernel = decode_stream_kernel<__nv_bfloat16, kRows, kStageBytes, kWarps, kVectors,
                                           kSharedA, kGroup, kRegisterA>;
  const std::int64_t blocks = std::min<std::int64_t>(sm_count(), p.n);
  const std::int64_t smem = decode_stream::shared_bytes(c.y * (kWarps / kGroup), kStageBytes,
                                                        kSharedA ? kRows * p.k * 2 : 0, kRows,
                                                        (p.n + blocks - 1) / blocks);
  if (smem > kMostShared) return false;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)));
  int depth = c.y;
  void* args[] = {&p, &depth};
  experiments::launch_kernel(reinterpret_cast<const void*>(kernel),
                             dim3(static_cast<unsigned>(blocks)), dim3(32 * kWarps),
                             static_cast<size_t>(smem), stream, args);
  return true;
}

template <int kSliceK, int kWarps, int kUnroll>
bool launch_mma_if(const Config& c, DecodeGemmProblem p, cudaStream_t stream) {
  if (c.kind != Kind::kMma || c.x != kSliceK || c.warps != kWarps || c.unroll != kUnroll)
    return false;
  using namespace decode_stream_mma;
  const auto kernel = p.m <= 8
                          ? decode_stream_mma_kernel<__nv_bfloat16, kSliceK, kWarps, kUnroll, false>
                          : decode_stream_mma_kernel<__nv_bfloat16, kSliceK, kWarps, kUnroll, true>;
  const Items items = items_of(p.n, p.k, kSliceK);
  const std::int64_t units = c.whole_groups ? items.count / items.slices : items.count;
  const std::int64_t blocks = std::min<std::int64_t>(sm_count(), units);
  const std::int64_t groups =
      c.whole_groups ? (units + blocks - 1) / blocks : groups_per_run(items, blocks);
  const std::int64_t smem = shared_bytes(c.y * kWarps, kSliceK, p.m, p.k, groups);
  if (smem > kMostShared) return false;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)));
  int depth = c.y;
  bool whole_groups = c.whole_groups;
  void* args[] = {&p, &g_work, &g_arrivals, &depth, &whole_groups};
  experiments::launch_kernel(reinterpret_cast<const void*>(kernel),
                             dim3(static_cast<unsigned>(blocks)), dim3(32 * kWarps),
                             static_cast<size_t>(smem), stream, args);
  return true;
}

// Launches `c` on the call, or returns false where it does not serve it.
bool launch(const Config& c, const DecodeGemmProblem& args, cudaStream_t stream) {
  return launch_decode_if<1, 4>(c, args, stream) || launch_decode_if<2, 2>(c, args, stream) ||
         launch_stream_if<0>(c, args, stream) || launch_stream_if<1>(c, args, stream) ||
         launch_stream_if<4>(c, args, stream) ||
         launch_stream_if<1, 8, 16, 2, 8>(c, args, stream) ||
         launch_stream_if<1, 8, 16, 2, 4>(c, args, stream) ||
         launch_stream_if<4, 8, 16, 2, 8>(c, args, stream) ||
         launch_stream_if<1, 8, 24, 3, 4>(c, args, stream) ||
         launch_stream_if<1, 16, 16, 2, 8>(c, args, stream) ||
         launch_stream_if<1, 8, 16, 2, 4, true>(c, args, stream) ||
         launch_stream_if<1, 8, 8, 1, 4, true>(c, args, stream) ||
         launch_stream_if<1, 8, 16, 4, 4, true>(c, args, stream) ||
         launch_mma_if<512, 8, 4>(c, args, stream) || launch_mma_if<1024, 4, 4>(c, args, stream) ||
         launch_mma_if<512, 4, 8>(c, args, stream) || launch_mma_if<256, 8, 4>(c, args, stream);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::vector<int> rows;
  for (int i = 1; i < argc; ++i) rows.push_back(std::atoi(argv[i]));
  if (rows.empty()) rows = {1, 4, 16};
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const cublasHandle_t handle = experiments::torch_like_cublas(stream);
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  // DECODE_CONFIGS="s8x2x8 i8x2x8" keeps those configurations only (kind letter, x, y, warps): a
  // profile of one kernel at a time.
  const std::string keep = std::getenv("DECODE_CONFIGS") ? std::getenv("DECODE_CONFIGS") : "";
  std::vector<Config> configs;
  for (const Config& c : kConfigs) {
    const std::string key = kind_letter(c.kind) + std::to_string(c.x) + "x" + std::to_string(c.y) +
                            "x" + std::to_string(c.warps) +
                            (c.group > 1 ? "g" + std::to_string(c.group) : "") +
                            (c.register_a ? "r" : "");
    if (keep.empty() || (" " + keep + " ").find(" " + key + " ") != std::string::npos)
      configs.push_back(c);
  }
  std::printf("%-12s %3s | %16s |", "workload", "M", "cublas us GB/s");
  for (const Config& c : configs)
    std::printf(" %c%4dx%dx%du%d%s%s%s us GB/s |", kind_letter(c.kind), c.x, c.y, c.warps, c.unroll,
                c.whole_groups ? "w" : "",
                c.group > 1 ? ("g" + std::to_string(c.group)).c_str() : "",
                c.register_a ? "r" : "");
  std::printf("\n");
  // DECODE_WORKLOADS="8b-qkv 70b-qkv" keeps those workloads only (a profile of a few kernels).
  const std::string only = std::getenv("DECODE_WORKLOADS") ? std::getenv("DECODE_WORKLOADS") : "";
  for (const Workload& w : kWorkloads) {
    if (!only.empty() &&
        (" " + only + " ").find(" " + std::string(w.label) + " ") == std::string::npos)
      continue;
    {
      const std::int64_t k = w.k, n = w.n;
      const std::size_t weight_bytes = static_cast<std::size_t>(k * n) * 2;
      const int sets = static_cast<int>(std::max<std::size_t>(2, (200u << 20) / weight_bytes + 1));
      std::vector<__nv_bfloat16> host_b(static_cast<std::size_t>(k * n));
      for (auto& v : host_b) v = float_to_bf16(normal(rng));
      std::vector<void*> bs(sets);
      for (auto& p : bs) {
        CHECK(cudaMalloc(&p, weight_bytes));
        CHECK(cudaMemcpy(p, host_b.data(), weight_bytes, cudaMemcpyHostToDevice));
      }
      std::vector<__nv_bfloat16> host_bias(static_cast<std::size_t>(n));
      for (auto& v : host_bias) v = float_to_bf16(normal(rng));
      void* bias;
      CHECK(cudaMalloc(&bias, n * 2));
      CHECK(cudaMemcpy(bias, host_bias.data(), n * 2, cudaMemcpyHostToDevice));
      for (int m : rows) {
        std::vector<__nv_bfloat16> host_a(static_cast<std::size_t>(m * k));
        for (auto& v : host_a) v = float_to_bf16(normal(rng));
        void *a, *out;
        CHECK(cudaMalloc(&a, m * k * 2));
        CHECK(cudaMalloc(&out, m * n * 2));
        CHECK(cudaMemcpy(a, host_a.data(), m * k * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&g_work, m * n * 4));
        CHECK(cudaMemset(g_work, 0, m * n * 4));
        CHECK(cudaMalloc(&g_arrivals, (n + 7) / 8 * 4));
        CHECK(cudaMemset(g_arrivals, 0, (n + 7) / 8 * 4));
        DecodeGemmProblem args;
        args.a = a;
        args.lda = k;
        args.ldb = k;
        args.out = out;
        args.m = m;
        args.n = n;
        args.k = k;
        // b[k][n] of the host copy in the layout under test.
        const auto b_at = [&](std::int64_t kk, std::int64_t nn) {
          return static_cast<double>(bf16_to_float(host_b[static_cast<std::size_t>(nn * k + kk)]));
        };
        // Correctness of every configuration, with and without bias, on 64 random columns and the
        // last.
        std::vector<std::int64_t> cols;
        std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
        for (int i = 0; i < 64; ++i) cols.push_back(pick(rng));
        cols.push_back(n - 1);
        for (const Config& cfg : configs)
          for (bool with_bias : {false, true}) {
            if (cfg.kind == Kind::kIdle) continue;
            args.b = bs[0];
            args.bias = with_bias ? bias : nullptr;
            CHECK(cudaMemsetAsync(out, 0xff, m * n * 2, stream));  // NaN poison
            if (!launch(cfg, args, stream)) continue;
            CHECK(cudaStreamSynchronize(stream));
            std::vector<__nv_bfloat16> got(static_cast<std::size_t>(m * n));
            CHECK(cudaMemcpy(got.data(), out, m * n * 2, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (int r = 0; r < m; ++r)
              for (std::int64_t c : cols) {
                double want = with_bias ? bf16_to_float(host_bias[static_cast<std::size_t>(c)]) : 0;
                double scale = 0;
                for (std::int64_t kk = 0; kk < k; ++kk) {
                  const double t =
                      bf16_to_float(host_a[static_cast<std::size_t>(r * k + kk)]) * b_at(kk, c);
                  want += t;
                  scale += std::fabs(t);
                }
                const double v = bf16_to_float(got[static_cast<std::size_t>(r * n + c)]);
                const double err =
                    std::fabs(v - want) / (std::fabs(want) * 0x1p-8 + scale * 1e-5 + 1e-6);
                if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
              }
            if (!(worst <= 1.0)) {
              std::printf("FAIL %s m %d config %c%dx%dx%du%d%s bias %d: error %.3g of tolerance\n",
                          w.label, m, kind_letter(cfg.kind), cfg.x, cfg.y, cfg.warps, cfg.unroll,
                          cfg.whole_groups ? "w" : "", with_bias, worst);
            }
          }
        args.bias = nullptr;
        const float alpha = 1, beta = 0;
        const double cublas_us = experiments::median_launch_us(
            [&](int set) {
              CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), m,
                                  static_cast<int>(k), &alpha, bs[set], CUDA_R_16BF,
                                  static_cast<int>(args.ldb), a, CUDA_R_16BF, static_cast<int>(k),
                                  &beta, out, CUDA_R_16BF, static_cast<int>(n), CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT_TENSOR_OP));
            },
            sets, 64, stream, true);
        std::printf("%-12s %3d | %8.2f %7.0f |", w.label, m, cublas_us,
                    weight_bytes / cublas_us * 1e-3);
        for (const Config& cfg : configs) {
          if (!launch(cfg, args, stream)) {
            std::printf(" %8s %7s |", "n/a", "");
            continue;
          }
          const double us = experiments::median_launch_us(
              [&](int set) {
                DecodeGemmProblem x = args;
                x.b = bs[set];
                launch(cfg, x, stream);
              },
              sets, 64, stream, true);
          std::printf(" %8.2f %7.0f |", us, weight_bytes / us * 1e-3);
        }
        std::printf("\n");
        std::fflush(stdout);
        CHECK(cudaFree(a));
        CHECK(cudaFree(out));
        CHECK(cudaFree(g_work));
        CHECK(cudaFree(g_arrivals));
      }
      for (void* p : bs) CHECK(cudaFree(p));
      CHECK(cudaFree(bias));
    }
  }
  return 0;
}
