// cuBLASLt and cuBLAS, opened at the first GEMM that needs them (Note [cuBLAS opened at first
// use]). Private to kernels/gemm/cuda (it includes cublasLt.h and cublas_v2.h).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

namespace tileops::kernels::cuda {

// Note [cuBLAS opened at first use]
// The library does not link libcublasLt (about 540 MB) and libcublas: it opens them with dlopen
// when a cuBLASLt GEMM entry is first built, and calls them through the pointers below. A linked
// libcublasLt costs every process about 0.12 s at start (an empty program linked to it: 0.12 s,
// against 0.00 s linked to libcudart alone, measured on the 2-core CI machine); every `tileops`
// command, `import tileops` and each of CI's ~930 test processes paid it, most without a GEMM.
// The libraries are looked up by their soname for the toolkit the library was built with (the
// system's search path, or the copies torch already loaded), then beside the libcudart the
// process loaded. The members are named as the functions (cublas().cublasLtMatmul(...)); the
// names cublas_v2.h maps to their _v2 symbols (cublasCreate, cublasSetStream, ...) map the same
// way here, so a call reads as the plain API call does.
#define TILEOPS_CUBLASLT_FUNCTIONS(X)     \
  X(cublasLtCreate)                       \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusName)                \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmul)                       \
  X(cublasLtMatmulAlgoCheck)              \
  X(cublasLtMatmulAlgoConfigGetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)

#define TILEOPS_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate)                   \
  X(cublasSetMathMode)              \
  X(cublasSetStream)                \
  X(cublasSetWorkspace)

// cublas_api.h overloads cublasGemmEx and cublasGemmStridedBatchedEx in C++ (inline wrappers
// taking the compute type as a cudaDataType), so `&cublasGemmEx` alone names no single function:
// these are the C functions' types, checked against their declarations in cublas_library.cpp.
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void*, const void*, cudaDataType, int,
                                        const void*, cudaDataType, int, const void*, void*,
                                        cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedEx = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
    cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasLibrary {
#define TILEOPS_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
  TILEOPS_CUBLASLT_FUNCTIONS(TILEOPS_CUBLAS_MEMBER)
  TILEOPS_CUBLAS_FUNCTIONS(TILEOPS_CUBLAS_MEMBER)
#undef TILEOPS_CUBLAS_MEMBER
  CublasGemmEx cublasGemmEx = nullptr;
  CublasGemmStridedBatchedEx cublasGemmStridedBatchedEx = nullptr;
};

// The functions, loaded once per process on the first call. Throws CudaError naming the library
// and dlopen's reason when it cannot be opened (no toolkit libraries on the machine), and again
// on each later call: nothing is left half-loaded.
const CublasLibrary& cublas();

}  // namespace tileops::kernels::cuda
