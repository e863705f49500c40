// What the few-output reduction experiments share (reduce_few_outputs.cu, reduce_column_tiles.cu):
// the 2048-row workloads' inputs, rotated beyond 4x the L2 with float64 sums of the first set,
// bfloat16 arithmetic on raw words, and the report line. Experiments only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench/experiments/harness.cuh"

namespace experiments::reduce {

constexpr int kRows = 2048, kCols = 4096;

// The 8 bfloat16 of a 16-byte word added to 8 float32 sums.
__device__ __forceinline__ void add8(float (&acc)[8], const uint4& w) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    acc[2 * i] += __uint_as_float(words[i] << 16);
    acc[2 * i + 1] += __uint_as_float(words[i] & 0xffff0000u);
  }
}

// Values in [-1, 1] from a hash of the index and the seed (a fresh set per seed), rounded to T;
// the float64 sums read them back.
template <class T>
__global__ void fill(T* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned h = static_cast<unsigned>(i * 2654435761u) ^ seed;
    p[i] = static_cast<T>(static_cast<float>(h % 2001) / 1000.0f - 1.0f);
  }
}

inline void report(const char* name, double bytes, double us, bool ok) {
  std::printf("%-52s %8.2f us %7.0f GB/s %6.1f%%  %s\n", name, us, bytes / us / 1e3,
              100.0 * bytes / us / 1e3 / 4250.0, ok ? "ok" : "FAIL");
}

inline double value(const __nv_bfloat16& v) { return bf16_to_float(v); }
inline double value(const float& v) { return v; }

// Sets of T [kRows, kCols] (enough to rotate beyond 4x the L2) and `outputs` outputs of O each,
// with the float64 sums and magnitudes of set 0 by column (`by_column`) or of all of it.
template <class T, class O>
struct Inputs {
  cudaStream_t stream;
  int outputs;
  int sets;
  std::vector<T*> x;
  std::vector<O*> out;
  std::vector<double> expected, magnitude;

  Inputs(cudaStream_t s, bool by_column, unsigned seed)
      : stream(s), outputs(by_column ? kCols : 1), sets(set_count()), x(sets), out(sets) {
    const long long n = elements();
    for (int i = 0; i < sets; ++i) {
      CHECK(cudaMalloc(&x[i], n * sizeof(T)));
      CHECK(cudaMalloc(&out[i], outputs * sizeof(O)));
      fill<<<1024, 256, 0, stream>>>(x[i], n, seed + i);
    }
    std::vector<T> host(n);
    CHECK(cudaMemcpyAsync(host.data(), x[0], n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    expected.assign(outputs, 0.0);
    magnitude.assign(outputs, 0.0);
    for (long long i = 0; i < n; ++i) {
      const double v = value(host[i]);
      expected[i % outputs] += v;
      magnitude[i % outputs] += std::fabs(v);
    }
  }
  ~Inputs() {
    for (int i = 0; i < sets; ++i) {
      CHECK(cudaFree(x[i]));
      CHECK(cudaFree(out[i]));
    }
  }
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;

  static long long elements() { return static_cast<long long>(kRows) * kCols; }
  static int set_count() {
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    return static_cast<int>(
        std::max<long long>(2, 4LL * l2 / (elements() * static_cast<long long>(sizeof(T))) + 1));
  }
  double bytes() const {
    return static_cast<double>(elements()) * sizeof(T) + static_cast<double>(outputs) * sizeof(O);
  }
  const uint4* words(int set) const { return reinterpret_cast<const uint4*>(x[set]); }

  // Set 0's outputs against the float64 sums: within `relative` of the sum plus `absolute` of
  // the magnitude (the rounding of the output and of float32 accumulation).
  bool check(double relative, double absolute) const {
    std::vector<O> got(outputs);
    CHECK(cudaMemcpyAsync(got.data(), out[0], outputs * sizeof(O), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int c = 0; c < outputs; ++c)
      if (!(std::fabs(value(got[c]) - expected[c]) <=
            relative * std::fabs(expected[c]) + absolute * magnitude[c]))
        return false;
    return true;
  }
};

}  // namespace experiments::reduce
