// Instantiates the grouped GEMM kernels (grouped_gemm.cuh) and launches them: a grid of the
// schedule's upper bound of row tiles times the column tiles (Note [Grouped GEMM kernel]).
#include <cuda_runtime.h>

#include <limits>
#include <string>

#include "cuda/check.hpp"
#include "kernels/gemm/cuda/grouped_gemm.cuh"
#include "kernels/gemm/cuda/grouped_gemm_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

namespace gg = grouped_gemm;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

template <class T, bool kColumnMajor, bool kVectorLoads>
void prepare() {
  TILEOPS_CUDA_CHECK(cudaFuncSetAttribute(grouped_gemm_kernel<T, kColumnMajor, kVectorLoads>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          gg::shared_bytes<kColumnMajor>()));
}

template <class T, bool kColumnMajor, bool kVectorLoads>
void launch(const GroupedGemmTensors& t, KernelCheckRecord* check, cudaStream_t stream) {
  GroupedGemmParams<T> p;
  p.x = static_cast<const T*>(t.x);
  p.w = static_cast<const T*>(t.w);
  p.offsets = static_cast<const std::int32_t*>(t.offsets);
  p.out = static_cast<T*>(t.out);
  p.m = t.m;
  p.n = t.n;
  p.k = t.k;
  p.groups = t.groups;
  p.w_expert = t.w_expert;
  p.w_ld = t.w_ld;
  p.check = check;
  // An empty output has no tile; a checked call still runs one block to check offsets.
  const bool empty = t.m == 0 || t.n == 0;
  const std::int64_t row_tiles = empty ? 1 : ceil_div(t.m, gg::kBM) + t.groups;
  const std::int64_t col_tiles = empty ? 1 : ceil_div(t.n, gg::kBN);
  // gridDim.x's limit is 2^31 - 1 blocks.
  if (row_tiles > std::numeric_limits<int>::max() / col_tiles)
    throw CheckError("grouped_gemm (cuda): " + std::to_string(row_tiles) + " row tiles by " +
                     std::to_string(col_tiles) + " column tiles; the grid holds at most " +
                     std::to_string(std::numeric_limits<int>::max()) + " blocks");
  p.row_tiles = row_tiles;
  p.col_tiles = col_tiles;
  const dim3 grid(static_cast<unsigned>(row_tiles * col_tiles));
  grouped_gemm_kernel<T, kColumnMajor, kVectorLoads>
      <<<grid, gg::kThreads, gg::shared_bytes<kColumnMajor>(), stream>>>(p);
  TILEOPS_CUDA_CHECK_LAUNCH();
}

// A variant as a type: dispatch() calls f(Variant<T, kColumnMajor, kVectorLoads>{}).
template <class T, bool kColumnMajor, bool kVectorLoads>
struct Variant {
  using Type = T;
  static constexpr bool column_major = kColumnMajor;
  static constexpr bool vector_loads = kVectorLoads;
};

template <class T, class F>
void dispatch_layout(const GroupedGemmVariant& v, F&& f) {
  if (v.w_column_major) {
    if (v.vector_loads) return f(Variant<T, true, true>{});
    return f(Variant<T, true, false>{});
  }
  if (v.vector_loads) return f(Variant<T, false, true>{});
  return f(Variant<T, false, false>{});
}

template <class F>
void dispatch(const GroupedGemmVariant& v, F&& f) {
  switch (v.dtype) {
    case DType::kFloat16:
      return dispatch_layout<__half>(v, f);
    case DType::kBFloat16:
      return dispatch_layout<__nv_bfloat16>(v, f);
    default:
      throw CheckError("grouped_gemm (cuda): dtype " + std::string(dtype_name(v.dtype)) +
                       " is not float16 or bfloat16");
  }
}

}  // namespace

void prepare_grouped_gemm(const GroupedGemmVariant& variant) {
  dispatch(variant, [](auto v) {
    using V = decltype(v);
    prepare<typename V::Type, V::column_major, V::vector_loads>();
  });
}

void launch_grouped_gemm(const GroupedGemmVariant& variant, const GroupedGemmTensors& tensors,
                         KernelCheckRecord* check, void* stream) {
  if ((tensors.m == 0 || tensors.n == 0) && check == nullptr) return;
  auto s = static_cast<cudaStream_t>(stream);
  dispatch(variant, [&](auto v) {
    using V = decltype(v);
    launch<typename V::Type, V::column_major, V::vector_loads>(tensors, check, s);
  });
}

}  // namespace tileops::kernels::cuda
