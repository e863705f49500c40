// Instantiates the rope kernels (rope.cuh), sizes each call's grid and launches them.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/rope/cuda/rope.cuh"
#include "kernels/rope/cuda/rope_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

// gridDim.x's limit; more blocks' worth of chunks than this are walked by the grid-stride loop.
constexpr std::int64_t kMaxBlocks = 2147483647;
// Below this many chunks the kernel indexes in 32 bits (Note [RoPE kernels]).
constexpr std::int64_t kNarrowIndexChunks = std::int64_t{1} << 31;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// kGroup: chunks a thread rotates (Note [RoPE kernels]).
template <class Path, class T, class I, int kGroup = 1>
void launch(RopeParams p, cudaStream_t stream) {
  p.groups = ceil_div(p.chunks, kGroup);
  const std::int64_t work = p.tokens * (p.q_heads + p.k_heads) * p.groups;
  const auto blocks = static_cast<unsigned>(std::min(ceil_div(work, kRopeThreads), kMaxBlocks));
  // Launched to overlap the previous kernel (Note [Dependent launch]).
  if (p.tokens * (p.q_heads + p.k_heads) * p.chunks < kNarrowIndexChunks) {
    tileops::cuda::launch_dependent(&rope_kernel<Path, T, I, std::uint32_t, kGroup>, dim3(blocks),
                                    dim3(kRopeThreads), 0, stream, p);
  } else {
    tileops::cuda::launch_dependent(&rope_kernel<Path, T, I, std::uint64_t, kGroup>, dim3(blocks),
                                    dim3(kRopeThreads), 0, stream, p);
  }
}

template <class T, class I>
void launch(RopePath path, bool is_neox, const RopeParams& p, cudaStream_t stream) {
  switch (path) {
    case RopePath::kNeoxVector:
      return launch<NeoxVector<T>, T, I>(p, stream);
    case RopePath::kInterleavedVector:
      return launch<InterleavedVector<T>, T, I, kRopeInterleavedGroup>(p, stream);
    case RopePath::kGeneral:
      if (is_neox) return launch<GeneralPair<T, true>, T, I>(p, stream);
      return launch<GeneralPair<T, false>, T, I>(p, stream);
  }
}

template <class T>
void launch(RopePath path, DType index_dtype, bool is_neox, const RopeParams& p,
            cudaStream_t stream) {
  switch (index_dtype) {
    case DType::kInt32:
      return launch<T, std::int32_t>(path, is_neox, p, stream);
    case DType::kInt64:
      return launch<T, std::int64_t>(path, is_neox, p, stream);
    default:
      throw CheckError("rope (cuda): positions dtype " + std::string(dtype_name(index_dtype)) +
                       " is not int32 or int64");
  }
}

// Chunks per head of each path (Note [RoPE kernels]).
std::int64_t chunks_of(RopePath path, DType dtype, std::int64_t rotary_dim) {
  switch (path) {
    case RopePath::kNeoxVector:
      return rotary_dim / 2 / rope_vector_elements(dtype);
    case RopePath::kInterleavedVector:
      return rotary_dim / rope_vector_elements(dtype);
    case RopePath::kGeneral:
      return rotary_dim / 2;
  }
  return 0;
}

}  // namespace

void launch_rope(RopePath path, DType dtype, DType index_dtype, bool is_neox, const RopeTensors& t,
                 tileops::cuda::KernelCheckRecord* check, void* stream) {
  if (t.tokens == 0 || t.rotary_dim == 0 || t.q_heads + t.k_heads == 0) return;
  RopeParams p;
  p.positions = t.positions;
  p.query = t.query;
  p.key = t.key;
  p.cache = t.cache;
  p.tokens = t.tokens;
  p.q_heads = t.q_heads;
  p.k_heads = t.k_heads;
  p.head_size = t.head_size;
  p.half = t.rotary_dim / 2;
  p.cache_rows = t.cache_rows;
  p.chunks = chunks_of(path, dtype, t.rotary_dim);
  p.check = check;
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kFloat16:
      return launch<__half>(path, index_dtype, is_neox, p, s);
    case DType::kBFloat16:
      return launch<__nv_bfloat16>(path, index_dtype, is_neox, p, s);
    case DType::kFloat32:
      return launch<float>(path, index_dtype, is_neox, p, s);
    default:
      throw CheckError("rope (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16 or float32");
  }
}

}  // namespace tileops::kernels::cuda
