// The activation family on the CPU: one elementwise loop and one gated loop, each instantiated per
// activation so that the activation inlines.
#include "kernels/activation/cpu/activation_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/common/cpu/cpu_kernel_support.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

inline constexpr std::int64_t kChunk = 4096;
// exp, erf and tanh cost tens of simple operations each.
inline constexpr std::int64_t kCostPerElement = 16;

struct Silu {
  float operator()(float g) const { return g / (1.0f + std::exp(-g)); }
};

struct GeluErf {
  float operator()(float g) const {
    constexpr float kInvSqrt2 = 0.70710678118654752440f;
    return 0.5f * g * (1.0f + std::erf(g * kInvSqrt2));
  }
};

struct GeluTanh {
  float operator()(float g) const {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    constexpr float kCubic = 0.044715f;
    return 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * (g + kCubic * g * g * g)));
  }
};

template <class T, class Act>
void unary(const Tensor& x, Tensor& out, Act act) {
  const std::int64_t n = x.numel();
  const T* in = x.data<const T>();
  T* o = out.data<T>();
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  detail::parallel_for(chunks, kChunk * kCostPerElement, [&](std::int64_t c) {
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i) o[i] = from_float<T>(act(to_float(in[i])));
  });
}

// Rows of x are [gate | up], each of out's row length N.
template <class T, class Act>
void gated(const Tensor& x, Tensor& out, Act act) {
  if (out.numel() == 0) return;
  const std::int64_t n = out.shape().back();
  const std::int64_t rows = out.numel() / n;
  const T* in = x.data<const T>();
  T* o = out.data<T>();
  detail::parallel_for(rows, n * kCostPerElement, [&](std::int64_t r) {
    const T* gate = in + r * 2 * n;
    const T* up = gate + n;
    T* row = o + r * n;
    for (std::int64_t i = 0; i < n; ++i)
      row[i] = from_float<T>(act(to_float(gate[i])) * to_float(up[i]));
  });
}

// Calls f(act) with the GELU form `tanh` selects.
template <class F>
void with_gelu(bool tanh, F&& f) {
  if (tanh)
    f(GeluTanh{});
  else
    f(GeluErf{});
}

}  // namespace

void silu(const Tensor& x, Tensor& out) {
  detail::dispatch_float(x.dtype(), "silu(cpu)", "x",
                         [&]<class T>(std::type_identity<T>) { unary<T>(x, out, Silu{}); });
}

void gelu(const Tensor& x, bool tanh, Tensor& out) {
  detail::dispatch_float(x.dtype(), "gelu(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    with_gelu(tanh, [&](auto act) { unary<T>(x, out, act); });
  });
}

void silu_and_mul(const Tensor& x, Tensor& out) {
  detail::dispatch_float(x.dtype(), "silu_and_mul(cpu)", "x",
                         [&]<class T>(std::type_identity<T>) { gated<T>(x, out, Silu{}); });
}

void gelu_and_mul(const Tensor& x, bool tanh, Tensor& out) {
  detail::dispatch_float(x.dtype(), "gelu_and_mul(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    with_gelu(tanh, [&](auto act) { gated<T>(x, out, act); });
  });
}

}  // namespace tileops::kernels::cpu
