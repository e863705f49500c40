// Instantiates the ALiBi kernel (alibi.cuh), plans its grid and launches it.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/attention/cuda/alibi.cuh"
#include "kernels/attention/cuda/alibi_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Columns a thread writes in each of its rows (Note [ALiBi kernel]).
constexpr std::int64_t kColumnsPerThread = 4;

template <class T, bool kVector>
void launch(const AlibiParams& p, int max_blocks, cudaStream_t stream) {
  // Columns per row: vectors on the vector path, elements on the general one; x the power of two
  // that covers them kColumnsPerThread to a thread, at most a block.
  const std::int64_t per_row =
      kVector ? (p.seq_len + Vec<T>::kSize - 1) / Vec<T>::kSize : p.seq_len;
  const std::int64_t per_thread = (per_row + kColumnsPerThread - 1) / kColumnsPerThread;
  const int x = static_cast<int>(std::min<std::uint64_t>(
      std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(per_thread, 1))), kThreads));
  const int y = kThreads / x;
  const std::int64_t rows = p.heads * p.seq_len;
  const std::int64_t blocks = std::clamp<std::int64_t>((rows + y - 1) / y, 1, max_blocks);
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  tileops::cuda::launch_dependent(&alibi_kernel<T, kVector>, dim3(static_cast<unsigned>(blocks)),
                                  dim3(x, y), 0, stream, p);
}

template <class T>
void launch(bool vector, const AlibiParams& p, int max_blocks, cudaStream_t stream) {
  if (vector)
    launch<T, true>(p, max_blocks, stream);
  else
    launch<T, false>(p, max_blocks, stream);
}

template <class T>
const void* kernel_for(bool vector) {
  if (vector) return reinterpret_cast<const void*>(&alibi_kernel<T, true>);
  return reinterpret_cast<const void*>(&alibi_kernel<T, false>);
}

}  // namespace

int plan_alibi(bool vector, DType dtype, int sm_count) {
  const void* kernel = nullptr;
  switch (dtype) {
    case DType::kFloat16:
      kernel = kernel_for<__half>(vector);
      break;
    case DType::kBFloat16:
      kernel = kernel_for<__nv_bfloat16>(vector);
      break;
    case DType::kFloat32:
      kernel = kernel_for<float>(vector);
      break;
    default:
      throw CheckError("alibi (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16 or float32");
  }
  int per_sm = 0;
  TILEOPS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return std::max(per_sm, 1) * std::max(sm_count, 1);
}

void launch_alibi(bool vector, DType dtype, std::int64_t heads, std::int64_t seq_len, void* out,
                  int max_blocks, void* stream) {
  if (heads <= 0 || seq_len <= 0) return;
  AlibiParams p;
  p.out = out;
  p.heads = heads;
  p.seq_len = seq_len;
  p.pow2_heads = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(heads)));
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kFloat16:
      return launch<__half>(vector, p, max_blocks, s);
    case DType::kBFloat16:
      return launch<__nv_bfloat16>(vector, p, max_blocks, s);
    case DType::kFloat32:
      return launch<float>(vector, p, max_blocks, s);
    default:
      throw CheckError("alibi (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16 or float32");
  }
}

}  // namespace tileops::kernels::cuda
