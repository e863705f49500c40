// CPU reference kernels of the attention family (manifest/attention.yaml).
#pragma once

#include <cstdint>

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// The ALiBi bias: out[h, i, j] = slope[h] * (j - i), out contiguous of shape
// [num_heads, seq_len, seq_len] and dtype float16, bfloat16 or float32 (the op's out_dtype).
// slope[h] follows AlibiFwdOp's pinned formula with m = 2^floor(log2(num_heads)):
// 2^(-8 (h + 1) / m) for h < m, then 2^(-4 (2k + 1) / m) for h = m + k. Each slope is the
// float32 nearest to its exact value (its power of two is evaluated in double and rounded
// once); the product with (j - i), exact in float32, is rounded to float32 and then to the
// output dtype.
void alibi(std::int64_t num_heads, std::int64_t seq_len, Tensor& out);

// slope[h] as above, for the op layer and tests that want the slopes alone.
float alibi_slope(std::int64_t num_heads, std::int64_t head);

}  // namespace tileops::kernels::cpu
