// TILEOPS_CUDA_CHECK: every CUDA runtime call the library makes goes through it, and so does the
// launch check after every kernel launch (TILEOPS_CUDA_CHECK(cudaGetLastError())). A failure
// raises CudaError naming the call site, the call, and the CUDA error's name and text:
//
//   "CUDA error at kernels/norm/cuda/rms_norm.cu:88: cudaGetLastError(): cudaErrorInvalidValue
//    (invalid argument)"
//
// Private to the library (src/cuda, kernels/*/cuda): it includes the CUDA runtime header, which no
// public header does.
#pragma once

#include <cuda_runtime_api.h>

namespace tileops::cuda::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);

// The error, if any, of an operation that must not throw (a deleter, a destructor): reported once
// per call site on stderr, never raised.
void report_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept;

}  // namespace tileops::cuda::detail

#define TILEOPS_CUDA_CHECK(call)                                                                  \
  do {                                                                                            \
    const cudaError_t tileops_cuda_status_ = (call);                                              \
    if (tileops_cuda_status_ != cudaSuccess)                                                      \
      ::tileops::cuda::detail::throw_cuda_error(tileops_cuda_status_, #call, __FILE__, __LINE__); \
  } while (false)

// Launch check: the launch itself fails synchronously (bad configuration, no kernel image for
// the device); faults inside the kernel surface at the next synchronising call.
#define TILEOPS_CUDA_CHECK_LAUNCH() TILEOPS_CUDA_CHECK(cudaGetLastError())
