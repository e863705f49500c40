// Float64 reference of the rope family (manifest/rope.yaml).
#pragma once

#include <cstdint>
#include <vector>

namespace tileops::references {

// x [N, H, D] (row-major) with the first R columns of every head rotated (docs/manifest.md §4.5):
// for token n, p = positions[n], i in [0, R / 2): cos_i = cache[p, i], sin_i = cache[p, R / 2 + i]
// of cache [P, R]; the pair (x1, x2) is (x[i], x[i + R / 2]) when is_neox, else (x[2 i],
// x[2 i + 1]), and becomes (x1 cos_i - x2 sin_i, x2 cos_i + x1 sin_i). Columns R..D-1 keep their
// values. `scale` (when given) receives the magnitude each element's error scales with:
// |x1 cos_i| + |x2 sin_i| for a rotated element, |x| for another. CheckError for a position
// outside [0, P).
std::vector<double> rope(const std::vector<double>& x, std::int64_t heads, std::int64_t head_size,
                         const std::vector<double>& positions, const std::vector<double>& cache,
                         std::int64_t rotary_dim, bool is_neox,
                         std::vector<double>* scale = nullptr);

}  // namespace tileops::references
