// What the CPU reference kernels share: a row-parallel loop that works with and without OpenMP,
// and the dtype switch that turns a runtime DType into the element type a kernel template needs.
// Internal to kernels/*/cpu; the op layer never includes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tileops/core/dtype.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"

namespace tileops::kernels::cpu::detail {

// Below this many element-operations a parallel region costs more than it saves (thread wake-up
// is a few microseconds; 32K simple operations take about as long).
inline constexpr std::int64_t kMinParallelWork = std::int64_t{1} << 15;

// Runs body(i) for i in [0, count), in parallel when OpenMP is enabled and count * cost_per_item
// is worth it. Iterations must be independent and must not throw (an exception cannot leave an
// OpenMP region).
template <class Body>
void parallel_for(std::int64_t count, std::int64_t cost_per_item, const Body& body) {
#if defined(_OPENMP)
  if (count > 1 && count * cost_per_item >= kMinParallelWork) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) body(i);
    return;
  }
#else
  (void)cost_per_item;
#endif
  for (std::int64_t i = 0; i < count; ++i) body(i);
}

// The element type a float kernel computes from: Half and BFloat16 convert to float on read.
template <class T>
constexpr float to_float(T value) noexcept {
  return static_cast<float>(value);
}
// One rounding from the float32 result to the storage type (Note [Narrow float casts]).
template <class T>
constexpr T from_float(float value) noexcept {
  return T(value);
}

[[noreturn]] inline void unsupported_dtype(std::string_view kernel, std::string_view tensor,
                                           DType dtype, std::string_view expected) {
  throw CheckError(std::string(kernel) + ": " + std::string(tensor) + " has dtype " +
                   std::string(dtype_name(dtype)) + "; expected " + std::string(expected));
}

// Calls f(std::type_identity<T>{}) with T in {Half, BFloat16, float} for the matching dtype.
template <class F>
void dispatch_float(DType dtype, std::string_view kernel, std::string_view tensor, F&& f) {
  switch (dtype) {
    case DType::kFloat16:
      return f(std::type_identity<Half>{});
    case DType::kBFloat16:
      return f(std::type_identity<BFloat16>{});
    case DType::kFloat32:
      return f(std::type_identity<float>{});
    default:
      unsupported_dtype(kernel, tensor, dtype, "float16, bfloat16 or float32");
  }
}

// As dispatch_float, plus int32 and int64.
template <class F>
void dispatch_float_or_int(DType dtype, std::string_view kernel, std::string_view tensor, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      return f(std::type_identity<std::int32_t>{});
    case DType::kInt64:
      return f(std::type_identity<std::int64_t>{});
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return dispatch_float(dtype, kernel, tensor, std::forward<F>(f));
    default:
      unsupported_dtype(kernel, tensor, dtype, "float16, bfloat16, float32, int32 or int64");
  }
}

}  // namespace tileops::kernels::cpu::detail
