// Launches the reduction kernel templates (reduce_axes.cuh) for one op and dtype as a plan says;
// sum.cu, mean.cu and amax.cu instantiate it, so that the three compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/reduction/cuda/reduce_axes.cuh"
#include "kernels/reduction/cuda/reduce_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda::reduction {

template <template <class> class Policy, class T, int kN>
void launch_reduce_kernel(const ReduceLaunch& l, const ReduceParams& p, cudaStream_t stream) {
  using Pol = Policy<T>;
  const dim3 grid(static_cast<unsigned>(l.blocks));
  if (l.kernel == ReduceKernel::kColumns) {
    reduce_columns_kernel<Pol, T, kN>
        <<<dim3(static_cast<unsigned>(l.blocks), static_cast<unsigned>(l.chunks)),
           dim3(kColumnAccesses, kColumnSteps), 0, stream>>>(p);
  } else if (l.lanes == 32) {
    reduce_rows_kernel<Pol, T, kN, 32>
        <<<grid, dim3(static_cast<unsigned>(l.threads)), 0, stream>>>(p);
  } else {
    reduce_rows_kernel<Pol, T, kN, 0>
        <<<grid, dim3(static_cast<unsigned>(l.threads)), 0, stream>>>(p);
  }
  TILEOPS_CUDA_CHECK_LAUNCH();
}

template <template <class> class Policy, class T>
void launch_reduce_typed(const ReduceLaunch& l, const void* x, void* out, void* scratch,
                         cudaStream_t stream) {
  using Pol = Policy<T>;
  constexpr int kThreads = 256;
  if (l.kernel == ReduceKernel::kNone) return;
  if (l.kernel == ReduceKernel::kFill) {
    const auto blocks = static_cast<unsigned>(
        std::min<std::int64_t>((l.outputs + kThreads - 1) / kThreads, 0x7fffffff));
    reduce_fill_kernel<Pol, T><<<blocks, kThreads, 0, stream>>>(out, l.outputs, l.count);
    TILEOPS_CUDA_CHECK_LAUNCH();
    return;
  }
  if (l.kernel == ReduceKernel::kHeld) {
    // A block per row (Note [Held rows]); `blocks` is the rows, under 2^31 (the plan).
    const T* rows = static_cast<const T*>(x);
    T* outputs = static_cast<T*>(out);
    int n_vec = static_cast<int>(l.run / Vec<T>::kSize);
    std::int64_t count = l.count;
    void* args[] = {&rows, &outputs, &n_vec, &count};
    tileops::cuda::launch_dependent(reinterpret_cast<const void*>(&reduce_held_rows_kernel<Pol, T>),
                                    dim3(static_cast<unsigned>(l.blocks)),
                                    dim3(static_cast<unsigned>(l.threads)), args, 0, stream);
    return;
  }
  ReduceParams p;
  p.x = x;
  p.out = out;
  p.partials = scratch;
  p.kept = l.kept;
  p.reduced = l.reduced;
  p.items = l.items;
  p.run = l.run;
  p.segments = l.segments;
  p.count = l.count;
  p.chunks = l.chunks;
  p.chunk_len = l.chunk_len;
  if (l.vector) {
    launch_reduce_kernel<Policy, T, Vec<T>::kSize>(l, p, stream);
  } else {
    launch_reduce_kernel<Policy, T, 1>(l, p, stream);
  }
  if (l.chunks > 1) {
    constexpr std::int64_t kWarps = kThreads / 32;
    const auto blocks = static_cast<unsigned>(
        std::min<std::int64_t>((l.outputs + kWarps - 1) / kWarps, 0x7fffffff));
    reduce_finish_kernel<Pol, T>
        <<<blocks, kThreads, 0, stream>>>(scratch, out, l.outputs, l.chunks, l.count);
    TILEOPS_CUDA_CHECK_LAUNCH();
  }
}

template <template <class> class Policy>
void launch_reduce_op(std::string_view op, const ReduceLaunch& l, DType dtype, const void* x,
                      void* out, void* scratch, void* stream) {
  const auto native = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kFloat16:
      return launch_reduce_typed<Policy, __half>(l, x, out, scratch, native);
    case DType::kBFloat16:
      return launch_reduce_typed<Policy, __nv_bfloat16>(l, x, out, scratch, native);
    case DType::kFloat32:
      return launch_reduce_typed<Policy, float>(l, x, out, scratch, native);
    default:
      break;
  }
  // amax alone takes integers.
  if constexpr (requires { Policy<int>::kInteger; }) {
    if (dtype == DType::kInt32)
      return launch_reduce_typed<Policy, std::int32_t>(l, x, out, scratch, native);
    if (dtype == DType::kInt64)
      return launch_reduce_typed<Policy, std::int64_t>(l, x, out, scratch, native);
  }
  throw CheckError(std::string(op) + " (cuda): unsupported dtype " +
                   std::string(dtype_name(dtype)));
}

}  // namespace tileops::kernels::cuda::reduction
