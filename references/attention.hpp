// Float64 references of the attention family (manifest/attention.yaml).
#pragma once

#include <cstdint>
#include <vector>

namespace tileops::references {

// The ALiBi slopes of `heads` heads (docs/manifest.md §4.6): with m the largest power of two
// <= heads, 2^(-8 (h + 1) / m) for h < m, then 2^(-4 (2k + 1) / m) for the remaining heads.
std::vector<double> alibi_slopes(std::int64_t heads);

// The ALiBi bias output[h, i, j] = slope[h] * (j - i), row-major [heads, seq, seq].
std::vector<double> alibi(std::int64_t heads, std::int64_t seq);

}  // namespace tileops::references
