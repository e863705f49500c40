// The gemm family's CPU kernels, on OpenBLAS (docs/gemm.md): framework-free functions over checked
// views; gemm_kernels.hpp adapts them to the kernel interfaces.
#pragma once

#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cpu {

// out [M, N] = a [M, K] @ b [K, N] (+ bias [N]).
void gemm(const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& out);
// out [L, M, N] = a [L, M, K] @ b [L, K, N], a batch stride of 0 repeating one matrix.
void bmm(const Tensor& a, const Tensor& b, Tensor& out);
// out [M, N]: rows of group g = x's rows @ w[g] (manifest/gemm.yaml); rows past the last group end
// are 0. CheckError naming `offsets` when its ends are negative, decreasing or past M, raised
// before anything is written.
void grouped_gemm(const Tensor& x, const Tensor& w, const Tensor& offsets, Tensor& out);

}  // namespace tileops::kernels::cpu
