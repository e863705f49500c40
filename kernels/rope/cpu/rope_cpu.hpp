// CPU reference kernel of the rope family (manifest/rope.yaml, docs/manifest.md §4.5).
//
// Contract: tensors are contiguous CPU tensors that the op layer has already checked against the
// manifest: positions [N] of int32 or int64, query [N, Hq, D] and key [N, Hk, D] of one dtype T in
// {float16, bfloat16, float32}, cos_sin_cache [P, R] of T, R even and R <= D. Dtypes outside
// those sets, and a position outside [0, P), throw CheckError before anything is written.
#pragma once

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// Rotates the first R columns of every head of query and key in place, token by token. For token
// n, p = positions[n], i in [0, R / 2): cos_i = cos_sin_cache[p, i], sin_i = cos_sin_cache[p,
// R / 2 + i]; the pair (x1, x2) is (x[i], x[i + R / 2]) when is_neox (rotate-half), else
// (x[2 i], x[2 i + 1]) (interleaved), and becomes (x1 cos_i - x2 sin_i, x2 cos_i + x1 sin_i),
// computed in float32 and rounded to T once. Columns R..D-1 are neither read nor written.
void rope(const Tensor& positions, const Tensor& query, const Tensor& key,
          const Tensor& cos_sin_cache, bool is_neox);

}  // namespace tileops::kernels::cpu
