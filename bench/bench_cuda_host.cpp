// Host time of an op call on the GPU (issue target: a cache-hit RMSNormFwdOp call on CUDA tensors
// with `out` given costs at most 1 us of CPU time beyond the kernel launch itself).
//
// Both benchmarks time, with the host's clock, a batch of kBatch back-to-back calls that only
// queue work, and synchronise the stream outside the timed region: the launch queue never fills,
// so the figure is the CPU's time per call, not the kernel's. BM_CudaHost_RMSNorm_BareLaunch
// launches the very kernel the op's entry planned (kernels/norm/cuda/norm_launch.hpp); the
// difference between the two is what the framework adds to a launch.
// Run: build/cuda/bench/tileops_host_bench --benchmark_filter=CudaHost
#include <benchmark/benchmark.h>

#if TILEOPS_WITH_CUDA
#include <cuda_runtime_api.h>

#include <chrono>

#include "cuda/runtime.hpp"
#include "kernels/norm/cuda/norm_launch.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/ops/norm.hpp"

namespace {

using namespace tileops;

constexpr int kBatch = 64;
// Batches per repetition, fixed: the manual time of a batch is its host time divided by kBatch, so
// a time-based iteration count would run tens of thousands of batches, each waiting for the GPU.
constexpr int kIterations = 2000;
constexpr std::int64_t kWidth = 4096;

Tensor gpu_tensor(const Shape& shape) {
  Tensor host = Tensor::empty(shape, DType::kBFloat16);
  auto* bytes = static_cast<unsigned char*>(host.data_ptr());
  for (std::size_t i = 0; i < host.nbytes(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 61);
  return host.to(Device::cuda(0), DType::kBFloat16);
}

// Times `batch()` (kBatch calls) per iteration, the stream drained between iterations untimed.
template <class Batch>
void time_batches(benchmark::State& st, cudaStream_t stream, Batch&& batch) {
  for (auto _ : st) {
    const auto start = std::chrono::steady_clock::now();
    batch();
    const auto stop = std::chrono::steady_clock::now();
    st.SetIterationTime(std::chrono::duration<double>(stop - start).count() / kBatch);
    if (cudaStreamSynchronize(stream) != cudaSuccess) st.SkipWithError("the stream failed");
  }
}

bool skip_without_gpu(benchmark::State& st) {
  if (cuda::device_count() > 0) return false;
  st.SkipWithError("no CUDA device");
  return true;
}

void BM_CudaHost_RMSNorm_CacheHit(benchmark::State& st) {
  if (skip_without_gpu(st)) return;
  // The device's default stream, which the library resolves to its own stream (Note [Default
  // stream] in src/cuda/runtime.hpp).
  const Stream stream = Stream::default_for(Device::cuda(0));
  RMSNormFwdOp op(Shape{kWidth});
  Tensor x = gpu_tensor(Shape{1, kWidth});
  Tensor w = gpu_tensor(Shape{kWidth});
  CallOptions options{gpu_tensor(Shape{1, kWidth})};
  op(x, w, options);  // selects the implementation and builds the entry
  auto native = static_cast<cudaStream_t>(cuda::native_stream(stream));
  time_batches(st, native, [&] {
    for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(op(x, w, options));
  });
}
BENCHMARK(BM_CudaHost_RMSNorm_CacheHit)->UseManualTime()->Iterations(kIterations);

// The same call on CUDA's legacy default stream (cudaStreamLegacy, the handle 0x1), where a torch
// caller on its default stream runs (Note [Python streams] in python/src/streams.cpp).
void BM_CudaHost_RMSNorm_LegacyStream(benchmark::State& st) {
  if (skip_without_gpu(st)) return;
  const StreamGuard guard(Stream(Device::cuda(0), static_cast<void*>(cudaStreamLegacy)));
  RMSNormFwdOp op(Shape{kWidth});
  Tensor x = gpu_tensor(Shape{1, kWidth});
  Tensor w = gpu_tensor(Shape{kWidth});
  CallOptions options{gpu_tensor(Shape{1, kWidth})};
  op(x, w, options);
  time_batches(st, cudaStreamLegacy, [&] {
    for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(op(x, w, options));
  });
}
BENCHMARK(BM_CudaHost_RMSNorm_LegacyStream)->UseManualTime()->Iterations(kIterations);

void BM_CudaHost_RMSNorm_BareLaunch(benchmark::State& st) {
  if (skip_without_gpu(st)) return;
  namespace k = kernels::cuda;
  const Stream stream = Stream::default_for(Device::cuda(0));
  Tensor x = gpu_tensor(Shape{1, kWidth});
  Tensor w = gpu_tensor(Shape{kWidth});
  Tensor out = gpu_tensor(Shape{1, kWidth});
  int sm_count = 0, smem_budget = 0;
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&smem_budget, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  const k::NormLaunch launch = k::plan_norm(k::NormOp::kRMS, k::NormPath::kBlock, DType::kBFloat16,
                                            kWidth, sm_count, smem_budget);
  const k::NormTensors tensors{x.data_ptr(),   nullptr, w.data_ptr(), nullptr,
                               out.data_ptr(), 1,       1e-6f};
  void* native = cuda::native_stream(stream);
  time_batches(st, static_cast<cudaStream_t>(native), [&] {
    for (int i = 0; i < kBatch; ++i) k::launch_norm(launch, tensors, native);
  });
}
BENCHMARK(BM_CudaHost_RMSNorm_BareLaunch)->UseManualTime()->Iterations(kIterations);

}  // namespace

#endif  // TILEOPS_WITH_CUDA
