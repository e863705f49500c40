// What the norm experiments of this folder share: bfloat16 rows of random values, rotated sets
// of device buffers for x, the residual, the output, the weight and the bias, their NormParams, and
// a float64 check of a launch's output. Experiments only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/norm/cuda/norm.cuh"

namespace experiments::norm_rows {

using tileops::kernels::cuda::NormKind;
using tileops::kernels::cuda::NormParams;
using T = __nv_bfloat16;

struct Shape {
  long long rows;
  int n;
};

struct Buffers {
  std::vector<T*> x, residual, out, weight, bias;
  std::vector<T*> pools;  // make_pooled's allocations; the lists above point into them
  std::vector<T> host_x, host_residual, host_weight, host_bias;
};

inline T* upload(const std::vector<T>& host) {
  T* d;
  CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

inline std::vector<T> random_values(size_t count, unsigned seed, float lo, float hi) {
  std::vector<T> v(count);
  unsigned s = seed * 2654435761u + 12345u;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = experiments::float_to_bf16(lo + (hi - lo) * ((s >> 8) / 16777216.0f));
  }
  return v;
}

inline void release(Buffers& b) {
  if (!b.pools.empty()) {
    for (T* p : b.pools) CHECK(cudaFree(p));
    return;
  }
  for (auto* list : {&b.x, &b.residual, &b.out, &b.weight, &b.bias})
    for (T* p : *list) CHECK(cudaFree(p));
}

inline Buffers make(const Shape& s, int sets) {
  Buffers b;
  const size_t count = (size_t)s.rows * s.n;
  b.host_x = random_values(count, 1, -2.0f, 3.0f);  // a mean away from zero
  b.host_residual = random_values(count, 2, -1.0f, 1.0f);
  b.host_weight = random_values(s.n, 3, 0.5f, 1.5f);
  b.host_bias = random_values(s.n, 4, -0.5f, 0.5f);
  for (int i = 0; i < sets; ++i) {
    b.x.push_back(upload(b.host_x));
    b.residual.push_back(upload(b.host_residual));
    T* o;
    CHECK(cudaMalloc(&o, count * sizeof(T)));
    b.out.push_back(o);
    b.weight.push_back(upload(b.host_weight));
    b.bias.push_back(upload(b.host_bias));
  }
  return b;
}

// The same sets laid out as `tileops bench` lays them out (Note [CUDA bench] in
// tools/bench_cuda.cpp): each operand's sets in one allocation of its own, 256-byte aligned.
inline Buffers make_pooled(const Shape& s, int sets) {
  Buffers b = make(s, 1);
  release(b);
  b.x.clear(), b.residual.clear(), b.out.clear(), b.weight.clear(), b.bias.clear();
  auto pool = [&](std::vector<T*>& list, const std::vector<T>* host, size_t count) {
    const size_t stride = (count * sizeof(T) + 255) / 256 * 256;
    char* base;
    CHECK(cudaMalloc(&base, stride * sets));
    b.pools.push_back(reinterpret_cast<T*>(base));
    for (int i = 0; i < sets; ++i) {
      T* at = reinterpret_cast<T*>(base + stride * i);
      if (host) CHECK(cudaMemcpy(at, host->data(), count * sizeof(T), cudaMemcpyHostToDevice));
      list.push_back(at);
    }
  };
  const size_t count = (size_t)s.rows * s.n;
  pool(b.x, &b.host_x, count);
  pool(b.residual, &b.host_residual, count);
  pool(b.out, nullptr, count);
  pool(b.weight, &b.host_weight, s.n);
  pool(b.bias, &b.host_bias, s.n);
  return b;
}

inline NormParams params_of(const Shape& s, Buffers& b, int set) {
  NormParams p;
  p.x = b.x[set];
  p.residual = b.residual[set];
  p.weight = b.weight[set];
  p.bias = b.bias[set];
  p.out = b.out[set];
  p.rows = s.rows;
  p.n = s.n;
  p.eps = 1e-5f;
  return p;
}

// Max |out - reference| over `rows` of set 0, in units of the output's bfloat16 spacing near the
// value (so 1 means one rounding step); a NaN in the output counts as a failure (1e9).
template <NormKind kKind>
inline double check_rows(const Shape& s, Buffers& b, const std::vector<long long>& rows) {
  using experiments::bf16_to_float;
  std::vector<T> out(static_cast<size_t>(s.n));
  double worst = 0;
  for (long long r : rows) {
    CHECK(cudaMemcpy(out.data(), b.out[0] + r * s.n, s.n * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<double> x(s.n);
    for (int i = 0; i < s.n; ++i) {
      const size_t at = (size_t)r * s.n + i;
      x[i] = bf16_to_float(b.host_x[at]);
      if (kKind == NormKind::kFusedAddRMS)  // the residual is rounded to bfloat16 first
        x[i] = bf16_to_float(
            experiments::float_to_bf16((float)(x[i] + bf16_to_float(b.host_residual[at]))));
    }
    double mean = 0, ss = 0;
    if (kKind == NormKind::kLayer) {
      for (double v : x) mean += v;
      mean /= s.n;
    }
    for (double v : x) ss += (v - mean) * (v - mean);
    const double scale = 1.0 / std::sqrt(ss / s.n + 1e-5);
    for (int i = 0; i < s.n; ++i) {
      double y = (x[i] - mean) * scale * bf16_to_float(b.host_weight[i]);
      if (kKind == NormKind::kLayer) y += bf16_to_float(b.host_bias[i]);
      const double got = bf16_to_float(out[i]);
      const double ulp = std::max(std::fabs(y), 1e-2) * (1.0 / 128);
      const double e = std::fabs(got - y) / ulp;
      worst = std::max(worst, std::isnan(e) ? 1e9 : e);
    }
  }
  return worst;
}

// The same over the first rows (at most 8).
template <NormKind kKind>
inline double check(const Shape& s, Buffers& b) {
  std::vector<long long> rows;
  for (long long r = 0; r < std::min<long long>(s.rows, 8); ++r) rows.push_back(r);
  return check_rows<kKind>(s, b, rows);
}

// The fused op updates the residual in place: set 0's goes back to the host values before the
// launch that is checked.
inline void reset_residual(Buffers& b) {
  CHECK(cudaMemcpy(b.residual[0], b.host_residual.data(), b.host_residual.size() * sizeof(T),
                   cudaMemcpyHostToDevice));
}

}  // namespace experiments::norm_rows
