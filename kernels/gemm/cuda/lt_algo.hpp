// cuBLASLt algorithms as the gemm entries show and store them, and the status check of every
// cuBLASLt and cuBLAS call. Private to kernels/gemm/cuda (it includes cublasLt.h).
#pragma once

#include <cublasLt.h>

#include <optional>
#include <string>

namespace tileops::kernels::cuda {

[[noreturn]] void throw_cublaslt_error(cublasStatus_t status, const char* call, const char* file,
                                       int line);

// cuBLAS and cuBLASLt share cublasStatus_t and its names; the message names the library.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

bool same_algo(const cublasLtMatmulAlgo_t& a, const cublasLtMatmulAlgo_t& b);

// "cublaslt algo 21 tile 18 stages 4 splitk 1 cluster 2": the configuration attributes (tile,
// stages and cluster are cuBLASLt's enum values: cublasLtMatmulTile_t, cublasLtMatmulStages_t,
// cublasLtClusterShape_t).
std::string describe_algo(const cublasLtMatmulAlgo_t& algo);

// Note [Stored cuBLASLt algorithms]
// An algorithm is cuBLASLt's opaque cublasLtMatmulAlgo_t (eight 64-bit words), valid for the
// cuBLASLt version that produced it. It is stored as "cublaslt <version> <128 hex digits> <time in
// us>", the version from cublasLtGetVersion(); a stored algorithm of another version, or one not
// written so, is rejected (decode_algo says why), and one that fails cublasLtMatmulAlgoCheck for a
// shape is passed over for that shape: both fall back to the heuristic, never to a refusal.
std::string encode_algo(const cublasLtMatmulAlgo_t& algo, double microseconds);
std::optional<cublasLtMatmulAlgo_t> decode_algo(const std::string& text, std::string* why);

// The classic cuBLAS candidate (Note [The classic cuBLAS candidate] in lt_matmul.cpp) is stored as
// "cublas gemmex <time in us>". It names no algorithm, only the API whose dispatch picks one, so it
// carries no version: cublasGemmEx serves any shape of a call without bias in every version.
inline constexpr const char* kClassicGemmName = "cublas gemmex";
bool is_stored_classic(const std::string& text);

// A candidate that is not a cuBLASLt algorithm, stored by name: "<name> <time in us>" (the classic
// API, kClassicGemmName; the CUTLASS kernel, Note [CUTLASS GEMM candidate]).
std::string encode_named(const char* name, double microseconds);
bool is_stored_named(const std::string& text, const char* name);

}  // namespace tileops::kernels::cuda

#define TILEOPS_CUBLASLT_CHECK(call)                                                      \
  do {                                                                                    \
    const cublasStatus_t tileops_lt_status_ = (call);                                     \
    if (tileops_lt_status_ != CUBLAS_STATUS_SUCCESS)                                      \
      ::tileops::kernels::cuda::throw_cublaslt_error(tileops_lt_status_, #call, __FILE__, \
                                                     __LINE__);                           \
  } while (false)

#define TILEOPS_CUBLAS_CHECK(call)                                                          \
  do {                                                                                      \
    const cublasStatus_t tileops_cublas_status_ = (call);                                   \
    if (tileops_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                    \
      ::tileops::kernels::cuda::throw_cublas_error(tileops_cublas_status_, #call, __FILE__, \
                                                   __LINE__);                               \
  } while (false)
