// An experiment, not part of the library: what programmatic dependent launch (Note [Dependent
// launch] in src/cuda/dependent_launch.hpp) saves when the library's norm kernels are replayed
// back to back from a CUDA graph, and how many threads the few-rows staged kernel (Note [Few
// rows] in kernels/norm/cuda/norm.cuh) should take for a decode row. The kernels are the
// library's own (norm_staged_kernel, norm_rows_kernel), launched with and without the attribute;
// inputs rotate beyond the L2 as `tileops bench` rotates them.
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/dependent_launch.cu -o build/dependent_launch && build/dependent_launch
//
// Each variant's output is checked against a float64 reference (in bfloat16 steps) before it is
// timed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "bench/experiments/norm_rows.cuh"
#include "kernels/common/cuda/dependent_launch.cuh"
#include "kernels/norm/cuda/norm.cuh"
#include "kernels/norm/cuda/norm_few_rows.cuh"
#include "kernels/norm/cuda/norm_staged.cuh"

using namespace tileops::kernels::cuda;
using namespace experiments::norm_rows;

namespace {

__global__ void empty_kernel() { begin_dependent_kernel(); }

void launch_with(const void* kernel, dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                 bool dependent, void** args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent ? 1 : 0;
  CHECK(cudaLaunchKernelExC(&config, kernel, args));
}

// A decode row read straight into registers: kVpt vectors of x (and the residual, weight and
// bias) per thread, all loads issued before the first reduction; no copy engine, no barrier in
// shared memory.
template <NormKind kKind, int kVpt>
__global__ void __launch_bounds__(1024) direct_norm_kernel(NormParams p) {
  using V = Vec<T>;
  constexpr int kN = V::kSize;
  __shared__ BlockSumStorage storage;
  const int n_vec = static_cast<int>(p.n / kN);
  const long long offset = static_cast<long long>(blockIdx.x) * p.n;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  const float inv_n = 1.0f / static_cast<float>(p.n);
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

// Launches `kernel` (one block per row, `threads` threads, `smem` bytes of dynamic shared memory)
// once and checks set 0 against the reference, then times it; prints a row and returns the time.
template <NormKind kKind>
double measure(const char* variant, const void* kernel, int threads, int smem, const Shape& s,
               Buffers& b, int sets, cudaStream_t stream, bool dependent) {
  auto run = [&](int set) {
    NormParams p = params_of(s, b, set);
    void* args[] = {&p};
    launch_with(kernel, dim3(static_cast<unsigned>(s.rows)), dim3(threads), smem, stream, dependent,
                args);
  };
  reset_residual(b);
  run(0);
  CHECK(cudaStreamSynchronize(stream));
  const double err = check<kKind>(s, b);
  const double us = time_us(sets, stream, run);
  report(kind_name(kKind), variant, s, dependent, us, err, threads);
  return us;
}

// The few-rows staged kernel (weights staged with the row) with `threads` threads.
template <NormKind kKind>
void staged(const Shape& s, Buffers& b, int sets, cudaStream_t stream, int threads,
            bool dependent) {
  auto kernel = norm_staged_kernel<kKind, T, true>;
  const int rows_staged = kKind == NormKind::kRMS ? 2 : 3;
  const int smem = rows_staged * s.n * static_cast<int>(sizeof(T));
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  measure<kKind>("staged few-rows", reinterpret_cast<const void*>(kernel), threads, smem, s, b,
                 sets, stream, dependent);
}

// A register kernel with `threads` threads, kVpt vectors each: this file's direct_norm_kernel, or
// with kLibrary the library's norm_few_rows_kernel (norm_few_rows.cuh). The library measured its
// kernel slower than this file measured direct_norm_kernel for RMSNorm and LayerNorm (Note [Few
// rows]); the two side by side in one call are the next look.
template <NormKind kKind, int kVpt, bool kLibrary = false>
void direct(const Shape& s, Buffers& b, int sets, cudaStream_t stream, int threads,
            bool dependent) {
  auto kernel = kLibrary ? norm_few_rows_kernel<kKind, T, kVpt> : direct_norm_kernel<kKind, kVpt>;
  const char* name = kLibrary ? (kVpt == 1 ? "library 1 vector" : "library 2 vectors")
                              : (kVpt == 1 ? "direct 1 vector" : "direct 2 vectors");
  measure<kKind>(name, reinterpret_cast<const void*>(kernel), threads, 0, s, b, sets, stream,
                 dependent);
}

// The register kernel as the block path launches it for many rows: a block per row, four
// vectors per thread.
template <NormKind kKind>
void registers(const Shape& s, Buffers& b, int sets, cudaStream_t stream, bool dependent) {
  auto kernel = norm_rows_kernel<kKind, T, 0, 4>;
  const int threads = std::clamp((s.n / 8 / 4 + 31) / 32 * 32, 32, 1024);
  const double us = measure<kKind>("registers", reinterpret_cast<const void*>(kernel), threads, 0,
                                   s, b, sets, stream, dependent);
  const double streams = kKind == NormKind::kFusedAddRMS ? 4.0 : 2.0;
  std::printf("%60s %.1f%% of 4.25 TB/s\n", "",
              streams * s.rows * s.n * sizeof(T) / us / 1e3 / 4250 * 100);
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
  for (const Shape s : {Shape{1, 4096}, Shape{1, 8192}, Shape{1, 16384}, Shape{32, 4096}}) {
    const int sets = sets_for(s);
    Buffers b = make(s, sets);
    for (bool dependent : {true}) {
      staged<NormKind::kRMS>(s, b, sets, stream, 512, dependent);
      staged<NormKind::kLayer>(s, b, sets, stream, 512, dependent);
      staged<NormKind::kFusedAddRMS>(s, b, sets, stream, 512, dependent);
      const int vectors = s.n / 8;
      if (vectors <= 1024) {
        direct<NormKind::kRMS, 1>(s, b, sets, stream, vectors, dependent);
        direct<NormKind::kLayer, 1>(s, b, sets, stream, vectors, dependent);
        direct<NormKind::kFusedAddRMS, 1>(s, b, sets, stream, vectors, dependent);
      }
      if (vectors <= 1024) {
        direct<NormKind::kRMS, 1, true>(s, b, sets, stream, vectors, dependent);
        direct<NormKind::kLayer, 1, true>(s, b, sets, stream, vectors, dependent);
        direct<NormKind::kFusedAddRMS, 1, true>(s, b, sets, stream, vectors, dependent);
      }
      direct<NormKind::kRMS, 2, true>(s, b, sets, stream, std::min(1024, vectors / 2), dependent);
      direct<NormKind::kLayer, 2, true>(s, b, sets, stream, std::min(1024, vectors / 2), dependent);
      direct<NormKind::kRMS, 2>(s, b, sets, stream, std::min(1024, vectors / 2), dependent);
      direct<NormKind::kLayer, 2>(s, b, sets, stream, std::min(1024, vectors / 2), dependent);
      direct<NormKind::kFusedAddRMS, 2>(s, b, sets, stream, std::min(1024, vectors / 2), dependent);
    }
    release(b);
  }
  for (const Shape s : {Shape{2048, 4096}, Shape{2048, 8192}}) {
    const int sets = sets_for(s);
    Buffers b = make(s, sets);
    for (bool dependent : {false, true}) {
      registers<NormKind::kRMS>(s, b, sets, stream, dependent);
      registers<NormKind::kFusedAddRMS>(s, b, sets, stream, dependent);
    }
    release(b);
  }
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
