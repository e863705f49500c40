// Launches the softmax kernel templates (softmax.cuh) for one op and dtype as a plan says;
// softmax_fwd.cu and log_softmax_fwd.cu instantiate it, so that the two compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/reduction/cuda/softmax.cuh"
#include "kernels/reduction/cuda/softmax_launch.hpp"
#include "kernels/reduction/cuda/softmax_staged.cuh"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda::reduction {

template <bool kLog, class T, int kN>
void launch_softmax_rows(const SoftmaxLaunch& l, const SoftmaxParams& p, cudaStream_t stream) {
  // The same elements per lane whatever the access width (Note [Softmax kernels]).
  constexpr int kAccesses = kSoftmaxVectorsPerLane * Vec<T>::kSize / kN;
  const dim3 grid(static_cast<unsigned>(l.blocks));
  const dim3 block(static_cast<unsigned>(l.threads));
  switch (l.lanes) {
    case 8:
      tileops::cuda::launch_dependent(&softmax_rows_kernel<kLog, T, kN, 8, kAccesses>, grid, block,
                                      0, stream, p);
      break;
    case 32:
      tileops::cuda::launch_dependent(&softmax_rows_kernel<kLog, T, kN, 32, kAccesses>, grid, block,
                                      0, stream, p);
      break;
    default:
      // A block per row reads 16-byte vectors: rows read one element at a time would spill
      // registers, and the plan sends those longer than a warp holds to the online path.
      if constexpr (Pack<T, kN>::kVector) {
        tileops::cuda::launch_dependent(&softmax_rows_kernel<kLog, T, kN, 0, kAccesses>, grid,
                                        block, 0, stream, p);
      } else {
        throw CheckError("softmax (cuda): no block-per-row kernel reads one element at a time");
      }
      break;
  }
}

template <bool kLog, class T, int kN>
void launch_softmax_online(const SoftmaxLaunch& l, const SoftmaxParams& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(l.blocks));
  const dim3 block(static_cast<unsigned>(l.threads));
  tileops::cuda::launch_dependent(&softmax_online_kernel<kLog, T, kN>, grid, block, 0, stream, p);
  if (l.chunks > 1) {
    tileops::cuda::launch_dependent(&softmax_split_write_kernel<kLog, T, kN>, grid, block, 0,
                                    stream, p);
  }
}

template <bool kLog, class T>
void launch_softmax_typed(const SoftmaxLaunch& l, const SoftmaxShape& s, const void* x, void* out,
                          void* scratch, cudaStream_t stream) {
  SoftmaxParams p;
  p.x = x;
  p.out = out;
  p.rows = s.rows;
  p.length = s.length;
  p.inner = s.inner;
  p.chunks = l.chunks;
  p.chunk_accesses = l.chunk_accesses;
  p.partials = static_cast<MaxExpSum*>(scratch);
  constexpr int kVector = Vec<T>::kSize;
  switch (l.kernel) {
    case SoftmaxKernel::kNone:
      return;
    case SoftmaxKernel::kRegisters:
      return l.vector ? launch_softmax_rows<kLog, T, kVector>(l, p, stream)
                      : launch_softmax_rows<kLog, T, 1>(l, p, stream);
    case SoftmaxKernel::kStaged:
      tileops::cuda::launch_dependent(&softmax_staged_kernel<kLog, T>,
                                      dim3(static_cast<unsigned>(l.blocks)),
                                      dim3(static_cast<unsigned>(l.threads)),
                                      static_cast<std::size_t>(l.shared_bytes), stream, p);
      return;
    case SoftmaxKernel::kOnline:
      return l.vector ? launch_softmax_online<kLog, T, kVector>(l, p, stream)
                      : launch_softmax_online<kLog, T, 1>(l, p, stream);
    case SoftmaxKernel::kStrided: {
      const dim3 grid(static_cast<unsigned>(l.blocks));
      const dim3 block(kStridedColumns, kStridedSteps);
      tileops::cuda::launch_dependent(&softmax_strided_kernel<kLog, T>, grid, block, 0, stream, p);
      if (l.chunks > 1) {
        tileops::cuda::launch_dependent(&softmax_strided_write_kernel<kLog, T>, grid, block, 0,
                                        stream, p);
      }
      return;
    }
  }
}

template <bool kLog>
void allow_softmax_staged_op(DType dtype) {
  auto allow = [](const void* kernel) {
    TILEOPS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(kSoftmaxStagedMaxBytes)));
  };
  switch (dtype) {
    case DType::kFloat16:
      return allow(reinterpret_cast<const void*>(&softmax_staged_kernel<kLog, __half>));
    case DType::kBFloat16:
      return allow(reinterpret_cast<const void*>(&softmax_staged_kernel<kLog, __nv_bfloat16>));
    case DType::kFloat32:
      return allow(reinterpret_cast<const void*>(&softmax_staged_kernel<kLog, float>));
    default:
      return;  // no staged kernel: the launch refuses the dtype
  }
}

template <bool kLog>
void launch_softmax_op(const SoftmaxLaunch& l, DType dtype, const SoftmaxShape& s, const void* x,
                       void* out, void* scratch, void* stream) {
  const auto native = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kFloat16:
      return launch_softmax_typed<kLog, __half>(l, s, x, out, scratch, native);
    case DType::kBFloat16:
      return launch_softmax_typed<kLog, __nv_bfloat16>(l, s, x, out, scratch, native);
    case DType::kFloat32:
      return launch_softmax_typed<kLog, float>(l, s, x, out, scratch, native);
    default:
      throw CheckError(std::string(kLog ? "log_softmax" : "softmax") +
                       " (cuda): unsupported dtype " + std::string(dtype_name(dtype)));
  }
}

}  // namespace tileops::kernels::cuda::reduction
