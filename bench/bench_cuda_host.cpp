// Host time of an op call on the GPU (issue target: a cache-hit RMSNormFwdOp call on CUDA tensors
// with `out` given costs at most 1 us of CPU time beyond the kernel launch itself).
//
// Both benchmarks time, with the host's clock, a batch of kBatch back-to-back calls that only
// queue work, and synchronise the stream outside the timed region: the launch queue never fills,
// so the figure is the CPU's time per call, not the kernel's. BM_CudaHost_RMSNorm_BareLaunch
// launches the very kernel the op's entry planned (kernels/norm/cuda/norm_launch.hpp); the
// difference between the two is what the framework adds to a launch.
//
// The two run minutes apart, and the GPU machine's host runs at more than one speed
// (bench/results/2026-12-01-host-path-h200.md), so their difference moved between 0.1 and 1.8 us
// from call to call. BM_CudaHost_RMSNorm_BeyondLaunch times them in alternating batches instead
// and reports the medians and their difference as counters.
// Run: build/cuda/bench/tileops_host_bench --benchmark_filter=CudaHost
#include <benchmark/benchmark.h>

#if TILEOPS_WITH_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

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

// Host seconds per call of one batch of `batch()` (kBatch calls); the stream is drained after it,
// untimed, and `failed` set when it reports an error.
template <class Batch>
double time_one_batch(cudaStream_t stream, Batch&& batch, bool& failed) {
  const auto start = std::chrono::steady_clock::now();
  batch();
  const auto stop = std::chrono::steady_clock::now();
  failed = cudaStreamSynchronize(stream) != cudaSuccess || failed;
  return std::chrono::duration<double>(stop - start).count() / kBatch;
}

// Times `batch()` (kBatch calls) per iteration.
template <class Batch>
void time_batches(benchmark::State& st, cudaStream_t stream, Batch&& batch) {
  bool failed = false;
  for (auto _ : st) st.SetIterationTime(time_one_batch(stream, batch, failed));
  if (failed) st.SkipWithError("the stream failed");
}

double median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
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

// The kernel launch the op's entry makes for a [1, 4096] bfloat16 call, without the op: the fixed
// path (the op's choice there, `tileops bench` names it rms_norm_fixed_sm90), which launches the
// few-rows kernel on a cluster as a dependent launch.
struct BareRMSNormLaunch {
  Tensor x = gpu_tensor(Shape{1, kWidth});
  Tensor w = gpu_tensor(Shape{kWidth});
  Tensor out = gpu_tensor(Shape{1, kWidth});
  kernels::cuda::NormLaunch launch = plan();
  kernels::cuda::NormTensors tensors{x.data_ptr(),   nullptr, w.data_ptr(), nullptr,
                                     out.data_ptr(), 1,       1e-6f};

  static kernels::cuda::NormLaunch plan() {
    namespace k = kernels::cuda;
    int sm_count = 0, smem_budget = 0;
    cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&smem_budget, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    return k::plan_norm(k::NormOp::kRMS, k::NormPath::kFixed, DType::kBFloat16, kWidth, sm_count,
                        smem_budget);
  }
  void batch(void* stream) const {
    for (int i = 0; i < kBatch; ++i) kernels::cuda::launch_norm(launch, tensors, stream);
  }
};

void BM_CudaHost_RMSNorm_BareLaunch(benchmark::State& st) {
  if (skip_without_gpu(st)) return;
  const Stream stream = Stream::default_for(Device::cuda(0));
  const BareRMSNormLaunch bare;
  void* native = cuda::native_stream(stream);
  time_batches(st, static_cast<cudaStream_t>(native), [&] { bare.batch(native); });
}
BENCHMARK(BM_CudaHost_RMSNorm_BareLaunch)->UseManualTime()->Iterations(kIterations);

// The target's figure: a batch of cache-hit op calls and a batch of the same bare launches,
// alternating, so both see the host at the same speed. Counters (ns per call, medians over the
// iterations): call_ns, launch_ns, and beyond_launch_ns = call_ns - launch_ns.
void BM_CudaHost_RMSNorm_BeyondLaunch(benchmark::State& st) {
  if (skip_without_gpu(st)) return;
  const Stream stream = Stream::default_for(Device::cuda(0));
  RMSNormFwdOp op(Shape{kWidth});
  const BareRMSNormLaunch bare;
  CallOptions options{bare.out};
  op(bare.x, bare.w, options);  // selects the implementation and builds the entry
  void* native = cuda::native_stream(stream);
  auto native_stream = static_cast<cudaStream_t>(native);
  std::vector<double> calls, launches;
  bool failed = false;
  for (auto _ : st) {
    calls.push_back(time_one_batch(
        native_stream,
        [&] {
          for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(op(bare.x, bare.w, options));
        },
        failed));
    launches.push_back(time_one_batch(
        native_stream, [&] { bare.batch(native); }, failed));
    st.SetIterationTime(calls.back());
  }
  if (failed) st.SkipWithError("the stream failed");
  const double call = median(calls), launch = median(launches);
  st.counters["call_ns"] = call * 1e9;
  st.counters["launch_ns"] = launch * 1e9;
  st.counters["beyond_launch_ns"] = (call - launch) * 1e9;
}
BENCHMARK(BM_CudaHost_RMSNorm_BeyondLaunch)->UseManualTime()->Iterations(kIterations);

}  // namespace

#endif  // TILEOPS_WITH_CUDA
