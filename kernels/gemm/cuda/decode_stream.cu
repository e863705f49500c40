// The streamed decode GEMM candidate (decode_gemm_launch.hpp; Note [Streamed decode GEMM] in
// decode_stream.cuh).
#include <algorithm>
#include <atomic>

#include "cuda/check.hpp"
#include "cuda/dependent_launch.hpp"
#include "kernels/gemm/cuda/decode_stream.cuh"

namespace tileops::kernels::cuda {
namespace {

// The candidate's shape: one row, 8 KB stages, 16 warps in pairs, 4 vectors in flight a lane, two
// stages a pair (bench/results/2026-12-04-h200-streamed-decode-gemm.md); a's row held in registers
// where each group's items share one k range (register_a_fits), else in shared memory (Note
// [Streamed decode GEMM], bench/results/2026-12-04-h200-decode-a-in-registers.md).
constexpr int kStageBytes = 8 * 1024;
constexpr int kWarps = 16;
constexpr int kGroup = 2;
constexpr int kDepth = 2;
template <class T, bool kRegisterA>
constexpr auto kKernel =
    decode_stream_kernel<T, 1, kStageBytes, kWarps, 4, !kRegisterA, kGroup, kRegisterA>;

bool register_a(std::int64_t k) {
  return decode_stream::register_a_fits(k, kStageBytes / 2, kWarps / kGroup);
}

std::int64_t blocks_for(std::int64_t n, int sm_count) {
  return std::min<std::int64_t>(std::max(sm_count, 1), n);
}

// A kernel may use more than 48 KB of dynamic shared memory only once allowed: once per device
// (as the CUTLASS candidate does, gemm_cutlass.cuh), every call past the 64th device.
template <class T, bool kRegisterA>
void allow_most_shared(int device) {
  static std::atomic<bool> allowed[64];
  const bool tracked = device >= 0 && device < 64;
  if (tracked && allowed[device].load(std::memory_order_acquire)) return;
  TILEOPS_CUDA_CHECK(cudaFuncSetAttribute(kKernel<T, kRegisterA>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(kStreamedDecodeMostShared)));
  if (tracked) allowed[device].store(true, std::memory_order_release);
}

template <class T, bool kRegisterA>
void launch(const DecodeGemmProblem& p, int device, int sm_count, cudaStream_t stream) {
  allow_most_shared<T, kRegisterA>(device);
  const std::int64_t blocks = blocks_for(p.n, sm_count);
  DecodeGemmProblem params = p;
  int depth = kDepth;
  void* args[] = {&params, &depth};
  tileops::cuda::launch_dependent(
      reinterpret_cast<const void*>(kKernel<T, kRegisterA>), dim3(static_cast<unsigned>(blocks)),
      dim3(32 * kWarps), args,
      static_cast<std::size_t>(streamed_decode_shared_bytes(p.n, p.k, sm_count)), stream);
}

template <class T>
void launch(const DecodeGemmProblem& p, int device, int sm_count, cudaStream_t stream) {
  if (register_a(p.k))
    launch<T, true>(p, device, sm_count, stream);
  else
    launch<T, false>(p, device, sm_count, stream);
}

}  // namespace

std::int64_t streamed_decode_shared_bytes(std::int64_t n, std::int64_t k, int sm_count) {
  const std::int64_t blocks = blocks_for(n, sm_count);
  return decode_stream::shared_bytes(kDepth * kWarps / kGroup, kStageBytes,
                                     register_a(k) ? 0 : k * 2, 1, (n + blocks - 1) / blocks);
}

void launch_streamed_decode_gemm(DType dtype, const DecodeGemmProblem& p, int device, int sm_count,
                                 void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (dtype == DType::kFloat16)
    launch<__half>(p, device, sm_count, s);
  else
    launch<__nv_bfloat16>(p, device, sm_count, s);
}

}  // namespace tileops::kernels::cuda
