// cuBLAS as torch.mm calls it, for the GEMM experiments' reference timings: a checked cuBLAS call,
// and a handle with torch's settings on Hopper (float32 compute through cublasGemmEx's
// CUBLAS_COMPUTE_32F at the call, reduced-precision split-K reductions disallowed, a 32 MiB
// workspace) on the experiment's stream.
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#include "bench/experiments/harness.cuh"

#define CUBLAS(call)                                                                 \
  do {                                                                               \
    cublasStatus_t s_ = (call);                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call, s_); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace experiments {

// Never destroyed: the experiments run to the process's end.
inline cublasHandle_t torch_like_cublas(cudaStream_t stream) {
  cublasHandle_t handle;
  CUBLAS(cublasCreate(&handle));
  CUBLAS(cublasSetMathMode(
      handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  CUBLAS(cublasSetStream(handle, stream));
  void* workspace;
  CHECK(cudaMalloc(&workspace, 32 << 20));
  CUBLAS(cublasSetWorkspace(handle, workspace, 32 << 20));
  return handle;
}

}  // namespace experiments
