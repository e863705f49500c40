// The streamed decode GEMM candidate (decode_gemm_launch.hpp; Note [Streamed decode GEMM] in
// decode_stream.cuh).
#include <algorithm>
#include <mutex>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/gemm/cuda/decode_stream.cuh"

namespace tileops::kernels::cuda {
namespace {

// The candidate's shape: one row, 8 KB stages, 16 warps in pairs, 4 vectors in flight a lane, a's
// row in shared memory, two stages a pair (bench/results/2026-12-04-h200-streamed-decode-gemm.md).
constexpr int kStageBytes = 8 * 1024;
constexpr int kWarps = 16;
constexpr int kGroup = 2;
constexpr int kDepth = 2;
template <class T>
constexpr auto kKernel = decode_stream_kernel<T, 1, kStageBytes, kWarps, 4, true, kGroup>;

std::int64_t blocks_for(std::int64_t n, int sm_count) {
  return std::min<std::int64_t>(std::max(sm_count, 1), n);
}

// A kernel may use more than 48 KB of dynamic shared memory only once allowed, per device.
template <class T>
void allow_most_shared() {
  constexpr int kDevices = 64;
  static std::once_flag allowed[kDevices];
  int device = 0;
  TILEOPS_CUDA_CHECK(cudaGetDevice(&device));
  std::call_once(allowed[device % kDevices], [] {
    TILEOPS_CUDA_CHECK(cudaFuncSetAttribute(kKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(kStreamedDecodeMostShared)));
  });
}

template <class T>
void launch(const DecodeGemmProblem& p, int sm_count, cudaStream_t stream) {
  allow_most_shared<T>();
  const std::int64_t blocks = blocks_for(p.n, sm_count);
  DecodeGemmProblem params = p;
  int depth = kDepth;
  void* args[] = {&params, &depth};
  tileops::cuda::launch_dependent(
      reinterpret_cast<const void*>(kKernel<T>), dim3(static_cast<unsigned>(blocks)),
      dim3(32 * kWarps), args,
      static_cast<std::size_t>(streamed_decode_shared_bytes(p.n, p.k, sm_count)), stream);
}

}  // namespace

std::int64_t streamed_decode_shared_bytes(std::int64_t n, std::int64_t k, int sm_count) {
  const std::int64_t blocks = blocks_for(n, sm_count);
  return decode_stream::shared_bytes(kDepth * kWarps / kGroup, kStageBytes, k * 2, 1,
                                     (n + blocks - 1) / blocks);
}

void launch_streamed_decode_gemm(DType dtype, const DecodeGemmProblem& p, int sm_count,
                                 void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (dtype == DType::kFloat16)
    launch<__half>(p, sm_count, s);
  else
    launch<__nv_bfloat16>(p, sm_count, s);
}

}  // namespace tileops::kernels::cuda
