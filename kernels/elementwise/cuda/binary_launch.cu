// Instantiates the binary elementwise kernels (binary.cuh) and launches them.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/check.hpp"
#include "kernels/elementwise/cuda/binary.cuh"
#include "kernels/elementwise/cuda/binary_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Resident blocks per multiprocessor the grid is sized for; the grid-stride loops cover the rest.
constexpr int kBlocksPerSm = 8;

// Strides of `t` against `shape` (right-aligned), 0 on the axes where t broadcasts.
void broadcast_strides(const Tensor& t, const Shape& shape, std::int64_t* strides) {
  const std::size_t rank = shape.size();
  const std::size_t lead = rank - t.dim();
  std::int64_t stride = 1;
  for (std::size_t k = rank; k-- > 0;) {
    strides[k] = 0;
    if (k < lead) continue;
    const std::int64_t length = t.shape()[k - lead];
    if (length != 1) strides[k] = stride;
    stride *= length;
  }
}

template <BinaryKind kKind, class T>
void launch(bool vectorised, const BinaryParams& p, int sm_count, cudaStream_t stream) {
  const std::int64_t work = vectorised ? p.numel / Vec<T>::kSize + Vec<T>::kSize : p.numel;
  const std::int64_t blocks = std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1,
                                                       std::int64_t{kBlocksPerSm} * sm_count);
  const dim3 grid(static_cast<unsigned>(blocks));
  if (vectorised)
    binary_vector_kernel<kKind, T><<<grid, kThreads, 0, stream>>>(p);
  else
    binary_broadcast_kernel<kKind, T><<<grid, kThreads, 0, stream>>>(p);
  TILEOPS_CUDA_CHECK_LAUNCH();
}

template <BinaryKind kKind>
void launch(DType dtype, bool vectorised, const BinaryParams& p, int sm_count,
            cudaStream_t stream) {
  switch (dtype) {
    case DType::kFloat16:
      return launch<kKind, __half>(vectorised, p, sm_count, stream);
    case DType::kBFloat16:
      return launch<kKind, __nv_bfloat16>(vectorised, p, sm_count, stream);
    case DType::kFloat32:
      return launch<kKind, float>(vectorised, p, sm_count, stream);
    case DType::kInt32:
      return launch<kKind, std::int32_t>(vectorised, p, sm_count, stream);
    case DType::kInt64:
      return launch<kKind, std::int64_t>(vectorised, p, sm_count, stream);
    default:
      throw CheckError("binary (cuda): dtype " + std::string(dtype_name(dtype)) +
                       " is not float16, bfloat16, float32, int32 or int64");
  }
}

}  // namespace

void launch_binary(BinaryOp op, bool vectorised, const Tensor& a, const Tensor& b, double alpha,
                   std::int64_t alpha_int, Tensor& out, int sm_count, void* stream) {
  BinaryParams p;
  p.out = out.data_ptr();
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.numel = out.numel();
  p.alpha = static_cast<float>(alpha);
  p.alpha_int = alpha_int;
  if (!vectorised) {
    // A rank-0 result is one element of rank 1.
    const Shape shape = out.dim() == 0 ? Shape{1} : out.shape();
    if (shape.size() > static_cast<std::size_t>(kMaxBinaryRank))
      throw OpNotAvailableError("binary (cuda): rank " + std::to_string(shape.size()) +
                                " is above the " + std::to_string(kMaxBinaryRank) +
                                " the broadcast kernel decodes");
    p.rank = static_cast<int>(shape.size());
    for (int k = 0; k < p.rank; ++k) p.shape[k] = shape[static_cast<std::size_t>(k)];
    broadcast_strides(a, shape, p.a_strides);
    broadcast_strides(b, shape, p.b_strides);
  }
  auto s = static_cast<cudaStream_t>(stream);
  if (op == BinaryOp::kAdd)
    launch<BinaryKind::kAdd>(out.dtype(), vectorised, p, sm_count, s);
  else
    launch<BinaryKind::kMul>(out.dtype(), vectorised, p, sm_count, s);
}

}  // namespace tileops::kernels::cuda
