// rope: one task per token, which rotates every head of query and key with the token's cache row.
#include "kernels/rope/cpu/rope_cpu.hpp"

#include <cstdint>
#include <type_traits>

#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/rope/rope_messages.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

// The sizes of one call: N tokens, Hq and Hk heads of D columns, R rotated columns of each.
struct RopeSizes {
  std::int64_t tokens = 0, q_heads = 0, k_heads = 0, head_size = 0, rotary_dim = 0;
};

// Rotates the first R columns of `heads` heads of D columns from x on, with the cache row
// `cos_sin`: cos in its first R / 2 columns, sin in the last R / 2.
template <bool kNeox, class T>
void rotate_heads(T* x, std::int64_t heads, const RopeSizes& s, const T* cos_sin) {
  const std::int64_t half = s.rotary_dim / 2;
  for (std::int64_t h = 0; h < heads; ++h, x += s.head_size) {
    for (std::int64_t i = 0; i < half; ++i) {
      const std::int64_t i1 = kNeox ? i : 2 * i;
      const std::int64_t i2 = kNeox ? i + half : 2 * i + 1;
      const float c = to_float(cos_sin[i]);
      const float sn = to_float(cos_sin[half + i]);
      const float x1 = to_float(x[i1]);
      const float x2 = to_float(x[i2]);
      x[i1] = from_float<T>(x1 * c - x2 * sn);
      x[i2] = from_float<T>(x2 * c + x1 * sn);
    }
  }
}

// A position outside the cache would read past it. Positions are the caller's obligation
// (manifest/rope.yaml), but on the CPU checking them costs one pass over N integers, so a bad one
// raises before anything is written instead of reading out of bounds.
template <class I>
void check_positions(const I* positions, std::int64_t tokens, std::int64_t cache_rows) {
  for (std::int64_t n = 0; n < tokens; ++n) {
    const auto p = static_cast<std::int64_t>(positions[n]);
    if (p < 0 || p >= cache_rows) throw CheckError(bad_position_message(n, p, cache_rows));
  }
}

template <bool kNeox, class T, class I>
void rotate_tokens(const I* positions, T* query, T* key, const T* cache, const RopeSizes& s) {
  const std::int64_t q_row = s.q_heads * s.head_size;
  const std::int64_t k_row = s.k_heads * s.head_size;
  detail::parallel_for(s.tokens, (s.q_heads + s.k_heads) * s.rotary_dim, [&](std::int64_t n) {
    const T* cos_sin = cache + static_cast<std::int64_t>(positions[n]) * s.rotary_dim;
    rotate_heads<kNeox>(query + n * q_row, s.q_heads, s, cos_sin);
    rotate_heads<kNeox>(key + n * k_row, s.k_heads, s, cos_sin);
  });
}

}  // namespace

void rope(const Tensor& positions, const Tensor& query, const Tensor& key,
          const Tensor& cos_sin_cache, bool is_neox) {
  const RopeSizes s{positions.numel(), query.shape()[1], key.shape()[1], query.shape()[2],
                    cos_sin_cache.shape()[1]};
  if (s.tokens == 0 || s.rotary_dim == 0) return;
  detail::dispatch_float(query.dtype(), "rope(cpu)", "query", [&]<class T>(std::type_identity<T>) {
    auto run = [&]<class I>(std::type_identity<I>) {
      const I* pos = positions.data<const I>();
      check_positions(pos, s.tokens, cos_sin_cache.shape()[0]);
      const T* cache = cos_sin_cache.data<const T>();
      if (is_neox)
        rotate_tokens<true>(pos, query.data<T>(), key.data<T>(), cache, s);
      else
        rotate_tokens<false>(pos, query.data<T>(), key.data<T>(), cache, s);
    };
    switch (positions.dtype()) {
      case DType::kInt32:
        return run(std::type_identity<std::int32_t>{});
      case DType::kInt64:
        return run(std::type_identity<std::int64_t>{});
      default:
        detail::unsupported_dtype("rope(cpu)", "positions", positions.dtype(), "int32 or int64");
    }
  });
}

}  // namespace tileops::kernels::cpu
