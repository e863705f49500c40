// Note [cuBLAS opened at first use] (kernels/gemm/cuda/cublas_library.hpp): cuBLASLt and cuBLAS are
// not linked; the first GEMM opens them. Needs no GPU: only dlopen and library calls that touch no
// device, so these run in CI too.
#include <cublas_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/gemm/cuda/cublas_library.hpp"

namespace tileops::test_cuda {
namespace {

using kernels::cuda::cublas;

bool loaded(const char* stem) {
  const std::string name = std::string("lib") + stem + ".so." + std::to_string(CUBLAS_VER_MAJOR);
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle) dlclose(handle);  // RTLD_NOLOAD took a reference
  return handle != nullptr;
}

// A fresh process (the death test re-runs this binary for this test alone) starts without either
// library and has both after the first cublas().
TEST(CudaCublasLibrary, OpenedAtFirstUseNotAtProcessStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (loaded("cublasLt") || loaded("cublas")) std::_Exit(1);
        cublas();
        if (!loaded("cublasLt") || !loaded("cublas")) std::_Exit(2);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// The pointers are the toolkit's functions: the version is the major version the library was
// built against, and a status reads back as cuBLAS names it.
TEST(CudaCublasLibrary, FunctionsAreTheToolkitsOwn) {
  const auto& api = cublas();
  EXPECT_EQ(api.cublasLtGetVersion() / 10000, static_cast<std::size_t>(CUBLAS_VER_MAJOR));
  EXPECT_STREQ(api.cublasLtGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED),
               "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_NE(api.cublasGemmEx, nullptr);
  EXPECT_NE(api.cublasGemmStridedBatchedEx, nullptr);
}

}  // namespace
}  // namespace tileops::test_cuda
