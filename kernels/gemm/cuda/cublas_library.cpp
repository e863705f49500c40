#include "kernels/gemm/cuda/cublas_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

#define TILEOPS_CUBLAS_STRING_OF(x) #x
// The symbol of a function after cublas_v2.h's renames (cublasCreate -> "cublasCreate_v2").
#define TILEOPS_CUBLAS_SYMBOL(name) TILEOPS_CUBLAS_STRING_OF(name)

std::string soname(const char* stem) { return fmt::format("lib{}.so.{}", stem, CUBLAS_VER_MAJOR); }

// The directory of the libcudart this process runs with: where the toolkit's other libraries are
// when the search path does not name it (a build tree's RUNPATH names only what it links).
std::filesystem::path cudart_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 || !info.dli_fname)
    return {};
  return std::filesystem::path(info.dli_fname).parent_path();
}

// Opens lib<stem>.so.<major>; never closed (the handles and the functions live for the process).
void* open_library(const char* stem) {
  const std::string name = soname(stem);
  if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  const std::string first_error = dlerror();
  const std::filesystem::path beside = cudart_directory();
  if (!beside.empty()) {
    if (void* handle = dlopen((beside / name).c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  throw CudaError(fmt::format(
      "cuBLAS: cannot open {} (needed by the cuBLASLt GEMM kernels; found neither on the library "
      "search path nor beside libcudart{}): {}",
      name, beside.empty() ? "" : " in " + beside.string(), first_error));
}

template <class F>
void resolve(void* handle, const char* library, const char* symbol, F& function) {
  function = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!function)
    throw CudaError(fmt::format("cuBLAS: {} has no symbol {}", soname(library), symbol));
}

CublasLibrary load() {
  CublasLibrary api;
  // libcublas depends on libcublasLt: open the latter first, so that both are the same toolkit's.
  void* lt = open_library("cublasLt");
#define TILEOPS_CUBLAS_RESOLVE_LT(name) \
  resolve(lt, "cublasLt", TILEOPS_CUBLAS_SYMBOL(name), api.name);
  TILEOPS_CUBLASLT_FUNCTIONS(TILEOPS_CUBLAS_RESOLVE_LT)
#undef TILEOPS_CUBLAS_RESOLVE_LT
  void* classic = open_library("cublas");
#define TILEOPS_CUBLAS_RESOLVE(name) \
  resolve(classic, "cublas", TILEOPS_CUBLAS_SYMBOL(name), api.name);
  TILEOPS_CUBLAS_FUNCTIONS(TILEOPS_CUBLAS_RESOLVE)
#undef TILEOPS_CUBLAS_RESOLVE
  // The C declarations these types must match (a mismatch picks no overload and fails to compile).
  static_cast<void>(static_cast<CublasGemmEx>(&::cublasGemmEx));
  static_cast<void>(static_cast<CublasGemmStridedBatchedEx>(&::cublasGemmStridedBatchedEx));
  resolve(classic, "cublas", "cublasGemmEx", api.cublasGemmEx);
  resolve(classic, "cublas", "cublasGemmStridedBatchedEx", api.cublasGemmStridedBatchedEx);
  return api;
}

}  // namespace

const CublasLibrary& cublas() {
  // A throwing initialisation leaves the static uninitialised; the next call tries again.
  static const CublasLibrary library = load();
  return library;
}

}  // namespace tileops::kernels::cuda
