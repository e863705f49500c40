// add and mul over PyTorch broadcasting.
//
// out is walked as [rows, L] with L its last axis; each input gets per-axis strides that are 0
// where it broadcasts (a missing leading axis or a length-1 axis). A task covers a chunk of one
// output row, finds the inputs' row offsets once, and then runs the inner loop with an input
// stride of 0 or 1, so long rows stay sequential and the per-element index math disappears.
#include "kernels/elementwise/cpu/elementwise_cpu.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/common/cpu/cpu_kernel_support.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

inline constexpr std::int64_t kChunk = 4096;

// Strides of `t` against out's axes (right-aligned); 0 on broadcast axes.
Shape broadcast_strides(const Tensor& t, const Shape& out_shape) {
  const std::size_t rank = out_shape.size();
  const std::size_t lead = rank - t.dim();
  Shape strides = Shape::filled(rank, 0);
  std::int64_t stride = 1;
  for (std::size_t k = rank; k-- > lead;) {
    const std::int64_t size = t.shape()[k - lead];
    if (size != 1) strides[k] = stride;
    stride *= size;
  }
  return strides;
}

template <class T, class Op>
void binary_broadcast(const Tensor& a, const Tensor& b, Tensor& out, const Op& op) {
  if (out.numel() == 0) return;
  // A rank-0 result is one row of one element.
  const Shape out_shape = out.dim() == 0 ? Shape{1} : out.shape();
  const Shape a_strides = broadcast_strides(a, out_shape);
  const Shape b_strides = broadcast_strides(b, out_shape);
  const std::size_t last = out_shape.size() - 1;
  const std::int64_t length = out_shape[last];
  const std::int64_t rows = out.numel() / length;
  const std::int64_t chunks = (length + kChunk - 1) / kChunk;
  const T* as = a.data<const T>();
  const T* bs = b.data<const T>();
  T* os = out.data<T>();
  detail::parallel_for(rows * chunks, std::min(length, kChunk), [&](std::int64_t t) {
    const std::int64_t row = t / chunks;
    const std::int64_t begin = (t % chunks) * kChunk;
    const std::int64_t end = std::min(length, begin + kChunk);
    std::int64_t a_offset = 0;
    std::int64_t b_offset = 0;
    std::int64_t rest = row;
    for (std::size_t k = last; k-- > 0;) {
      const std::int64_t index = rest % out_shape[k];
      rest /= out_shape[k];
      a_offset += index * a_strides[k];
      b_offset += index * b_strides[k];
    }
    const T* a_row = as + a_offset;
    const T* b_row = bs + b_offset;
    const std::int64_t a_step = a_strides[last];
    const std::int64_t b_step = b_strides[last];
    T* out_row = os + row * length;
    for (std::int64_t i = begin; i < end; ++i)
      out_row[i] = op(a_row[i * a_step], b_row[i * b_step]);
  });
}

template <class T>
using Unsigned = std::make_unsigned_t<T>;

}  // namespace

void add(const Tensor& a, const Tensor& b, const Value& alpha, Tensor& out) {
  detail::dispatch_float_or_int(a.dtype(), "add(cpu)", "a", [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_integral_v<T>) {
      // The op's rules refuse a float alpha on integers first; called directly, the kernel says so
      // rather than let Value's conversion name neither the kernel nor the argument.
      if (!alpha.is_int())
        throw CheckError("add(cpu): alpha = " + alpha.repr() + " is not an int; an " +
                         std::string(dtype_name(a.dtype())) + " input takes an int alpha");
      // Unsigned arithmetic wraps by definition; converting back to T is modular in C++20.
      const auto alpha_u = static_cast<Unsigned<T>>(alpha.as_int());
      binary_broadcast<T>(a, b, out, [alpha_u](T x, T y) {
        return static_cast<T>(static_cast<Unsigned<T>>(x) + alpha_u * static_cast<Unsigned<T>>(y));
      });
    } else {
      const auto alpha_f = static_cast<float>(alpha.as_float());
      binary_broadcast<T>(a, b, out, [alpha_f](T x, T y) {
        return from_float<T>(to_float(x) + alpha_f * to_float(y));
      });
    }
  });
}

void mul(const Tensor& a, const Tensor& b, Tensor& out) {
  detail::dispatch_float_or_int(a.dtype(), "mul(cpu)", "a", [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_integral_v<T>) {
      binary_broadcast<T>(a, b, out, [](T x, T y) {
        return static_cast<T>(static_cast<Unsigned<T>>(x) * static_cast<Unsigned<T>>(y));
      });
    } else {
      binary_broadcast<T>(a, b, out,
                          [](T x, T y) { return from_float<T>(to_float(x) * to_float(y)); });
    }
  });
}

}  // namespace tileops::kernels::cpu
