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
    const bool several = l.kept.count > 1 || l.reduced.count > 1;
    tileops::cuda::launch_dependent(
        several ? &reduce_columns_kernel<Pol, T, kN, true>
                : &reduce_columns_kernel<Pol, T, kN, false>,
        dim3(static_cast<unsigned>(l.blocks), static_cast<unsigned>(l.chunks)),
        dim3(kColumnAccesses, kColumnSteps), 0, stream, p);
    return;
  }
  if (l.lanes == 32) {
    reduce_rows_kernel<Pol, T, kN, 32>
        <<<grid, dim3(static_cast<unsigned>(l.threads)), 0, stream>>>(p);
  } else {
    reduce_rows_kernel<Pol, T, kN, 0>
        <<<grid, dim3(static_cast<unsigned>(l.threads)), 0, stream>>>(p);
  }
  TILEOPS_CUDA_CHECK_LAUNCH();
}

// The held rows kernel (Note [Held rows]), or with kPartials its chunks of one run (Note [Held
// chunks]).
template <class Pol, class T, bool kPartials>
void launch_held(const ReduceLaunch& l, const void* x, void* out, cudaStream_t stream) {
  const T* rows = static_cast<const T*>(x);
  int n_vec = static_cast<int>(l.chunk_len / Vec<T>::kSize);
  std::int64_t vectors = l.items * l.run / Vec<T>::kSize;
  std::int64_t count = l.count;
  void* args[] = {&rows, &out, &n_vec, &vectors, &count};
  tileops::cuda::launch_dependent(
      reinterpret_cast<const void*>(&reduce_held_rows_kernel<Pol, T, kPartials>),
      dim3(static_cast<unsigned>(l.blocks)), dim3(static_cast<unsigned>(l.threads)), args, 0,
      stream);
}

// The second kernel of a split plan: the partials of each output combined into it.
template <class Pol, class T>
void launch_finish(const ReduceLaunch& l, const void* partials, void* out, cudaStream_t stream) {
  constexpr std::int64_t kThreads = 256;
  void* part = const_cast<void*>(partials);
  std::int64_t outputs = l.outputs, chunks = l.chunks, count = l.count;
  void* args[] = {&part, &out, &outputs, &chunks, &count};
  // The columns' partials are [split][output], a thread per output; the others' [output][chunk],
  // a warp or a block per output.
  const void* kernel;
  std::int64_t per_block;
  if (l.kernel == ReduceKernel::kColumns) {
    kernel = reinterpret_cast<const void*>(&reduce_finish_columns_kernel<Pol, T>);
    per_block = kThreads;
  } else if (l.finish_lanes == 32) {
    kernel = reinterpret_cast<const void*>(&reduce_finish_kernel<Pol, T, 32>);
    per_block = kThreads / 32;
  } else {
    kernel = reinterpret_cast<const void*>(&reduce_finish_kernel<Pol, T, 0>);
    per_block = 1;
  }
  const auto blocks = static_cast<unsigned>(
      std::min<std::int64_t>((l.outputs + per_block - 1) / per_block, 0x7fffffff));
  tileops::cuda::launch_dependent(kernel, dim3(blocks), dim3(kThreads), args, 0, stream);
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
    // A block per row or chunk; `blocks` is under 2^31 (the plan).
    if (l.chunks == 1) return launch_held<Pol, T, false>(l, x, out, stream);
    launch_held<Pol, T, true>(l, x, scratch, stream);
    return launch_finish<Pol, T>(l, scratch, out, stream);
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
  if (l.chunks > 1) launch_finish<Pol, T>(l, scratch, out, stream);
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
