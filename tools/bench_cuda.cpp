// Timing a bench case on a CUDA device (bench_device.hpp).
//
// Note [CUDA bench]
// - Inputs rotate: the case's inputs are replicated on the device into S sets (views into one
//   pool per input), with S large enough that the sets together exceed four times the L2, and
//   calls cycle through them, so every call reads its inputs from device memory, not from the L2
//   where the previous call left them. An op with one `buffer: out` output gets a rotated out
//   buffer too, so its writes do not land on lines the L2 still holds.
// - In-place inputs (FusedAddRMSNorm's residual) are restored from a pristine copy before every
//   timed batch, outside the timed region: every batch times the same values.
// - Time: CUDA events on the calls' stream around a batch of back-to-back calls (each batch at
//   least one full rotation and about a millisecond long), after a warm-up; the median over
//   batches, divided by the calls per batch. Small cases, whose time the host's launch rate
//   would set, replay the batch from a CUDA graph captured after the warm-up instead (the
//   framework's call path is capturable: no host synchronisation, stream-ordered allocation).
// - The calls run on a stream the bench creates and makes current for the device.
#include "bench_device.hpp"
#include "tileops/core/error.hpp"

#if TILEOPS_WITH_CUDA
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench_empty_kernel.hpp"
#include "cuda/runtime.hpp"
#include "tileops/core/stream.hpp"
#endif

namespace tileops::cli {

#if !TILEOPS_WITH_CUDA

DeviceTiming time_on_cuda(Op&, const std::vector<std::optional<Tensor>>&, Device device, int, int,
                          GraphMode) {
  throw OpNotAvailableError("bench: timing on " + device.str() +
                            " needs a CUDA build (preset cuda)");
}

std::string cuda_device_name(Device) { return ""; }

double empty_kernel_seconds(Device) { return 0.0; }

#else

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw CudaError(fmt::format("bench: {}: {} ({})", what, cudaGetErrorName(status),
                                cudaGetErrorString(status)));
}

// Below this many bytes per call a case is launch-bound and replays from a graph (kAuto).
constexpr std::int64_t kGraphBelowBytes = std::int64_t{32} << 20;
// A timed batch lasts about this long.
constexpr double kBatchSeconds = 1e-3;
constexpr std::int64_t kAlign = 256;

std::int64_t padded(std::int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// S views of one pool, each holding a copy of `t`.
struct Rotated {
  Tensor pool;
  std::vector<Tensor> views;
  std::optional<Tensor> pristine;  // a copy of the pool, for inputs the calls write

  Rotated(const Tensor& t, int sets, Device device, bool written) {
    const std::int64_t stride = padded(static_cast<std::int64_t>(t.nbytes()));
    const auto itemsize = static_cast<std::int64_t>(t.itemsize());
    pool = Tensor::empty(Shape{std::max<std::int64_t>(stride * sets / itemsize, 1)}, t.dtype(),
                         device);
    const Shape strides = contiguous_strides(t.shape());
    for (int k = 0; k < sets; ++k) {
      Tensor view = pool.as_strided(t.shape(), strides, k * stride);
      if (t.numel() > 0) view.copy_from(t);
      views.push_back(std::move(view));
    }
    if (written) {
      pristine = Tensor::empty(pool.shape(), pool.dtype(), device);
      pristine->copy_from(pool);
    }
  }
  void restore() {
    if (pristine) pool.copy_from(*pristine);
  }
};

class Events {
 public:
  Events() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  void start(cudaStream_t s) { check(cudaEventRecord(start_, s), "cudaEventRecord"); }
  void stop(cudaStream_t s) { check(cudaEventRecord(stop_, s), "cudaEventRecord"); }
  double seconds() {
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class OwnedStream {
 public:
  explicit OwnedStream(int device) {
    tileops::cuda::DeviceGuard guard(device);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~OwnedStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Graph {
 public:
  ~Graph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::string cuda_device_name(Device device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device.index) != cudaSuccess) return "";
  return prop.name;
}

double empty_kernel_seconds(Device device) {
  constexpr int kKernels = 1000;
  tileops::cuda::DeviceGuard on_device(device.index);
  OwnedStream owned(device.index);
  const cudaStream_t stream = owned.get();
  Graph graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  const bool launched = launch_empty_kernels(stream, kKernels);
  check(cudaStreamEndCapture(stream, &graph.graph_), "cudaStreamEndCapture");
  if (!launched) throw CudaError("bench: the empty kernel did not launch");
  check(cudaGraphInstantiate(&graph.exec_, graph.graph_, 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(graph.exec_, stream), "cudaGraphLaunch");  // the graph's warm-up
  Events events;
  std::vector<double> per_kernel;
  for (int b = 0; b < 9; ++b) {
    events.start(stream);
    check(cudaGraphLaunch(graph.exec_, stream), "cudaGraphLaunch");
    events.stop(stream);
    per_kernel.push_back(events.seconds() / kKernels);
  }
  std::sort(per_kernel.begin(), per_kernel.end());
  return per_kernel[per_kernel.size() / 2];
}

DeviceTiming time_on_cuda(Op& op, const std::vector<std::optional<Tensor>>& inputs, Device device,
                          int warmup, int batches, GraphMode graph_mode) {
  DeviceTiming timing;
  tileops::cuda::DeviceGuard on_device(device.index);
  OwnedStream owned(device.index);
  const cudaStream_t stream = owned.get();
  const StreamGuard on_stream(Stream(device, stream));

  // One call settles which inputs are written and what the output is.
  op.call(inputs);
  const auto record = op.last_call();
  const manifest::Entry& entry = op.op_class().entry();
  std::int64_t set_bytes = 0;
  for (const auto& t : inputs)
    if (t) set_bytes += padded(static_cast<std::int64_t>(t->nbytes()));
  const bool rotate_out = entry.outputs.size() == 1 && entry.outputs[0].buffer_out;
  std::optional<Tensor> out_template;
  if (rotate_out) {
    const manifest::TensorRecord& rec = record->output(0);
    out_template = Tensor::empty(rec.shape, rec.dtype, device);
    set_bytes += padded(static_cast<std::int64_t>(out_template->nbytes()));
  }
  const std::int64_t l2 = tileops::cuda::facts(device.index).l2_bytes;
  const std::int64_t target = 4 * std::max<std::int64_t>(l2, std::int64_t{50} << 20);
  const int sets = static_cast<int>(std::clamp<std::int64_t>(
      (target + std::max<std::int64_t>(set_bytes, 1) - 1) / std::max<std::int64_t>(set_bytes, 1), 2,
      4096));
  timing.sets = sets;
  timing.working_set_bytes = set_bytes * sets;

  std::vector<std::optional<Rotated>> rotated;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    rotated.emplace_back(inputs[i] ? std::optional<Rotated>(std::in_place, *inputs[i], sets, device,
                                                            record->writes_input(i))
                                   : std::nullopt);
  std::optional<Rotated> outs;
  if (out_template) outs.emplace(*out_template, sets, device, false);
  std::vector<std::vector<std::optional<Tensor>>> call_inputs(static_cast<std::size_t>(sets));
  for (int k = 0; k < sets; ++k)
    for (auto& r : rotated)
      call_inputs[k].push_back(r ? std::optional<Tensor>(r->views[k]) : std::nullopt);
  auto call = [&](int k) {
    CallOptions options;
    if (outs) options.out = outs->views[static_cast<std::size_t>(k)];
    op.call(call_inputs[static_cast<std::size_t>(k)], options);
  };
  auto restore = [&] {
    for (auto& r : rotated)
      if (r) r->restore();
  };

  // Warm-up, then one rotation timed to size the batches.
  Events events;
  for (int i = 0; i < std::max(warmup, 1); ++i) call(i % sets);
  restore();
  events.start(stream);
  for (int k = 0; k < sets; ++k) call(k);
  events.stop(stream);
  const double rotation = std::max(events.seconds(), 1e-7);
  const int rotations =
      static_cast<int>(std::clamp(std::ceil(kBatchSeconds / rotation), 1.0, 64.0));
  timing.calls_per_batch = rotations * sets;

  const std::int64_t bytes = op.eval_roofline().bytes;
  const bool want_graph = graph_mode == GraphMode::kAlways ||
                          (graph_mode == GraphMode::kAuto && bytes < kGraphBelowBytes);
  Graph graph;
  if (want_graph) {
    restore();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    try {
      check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            "cudaStreamBeginCapture");
      try {
        for (int c = 0; c < timing.calls_per_batch; ++c) call(c % sets);
      } catch (...) {
        cudaGraph_t broken = nullptr;
        cudaStreamEndCapture(stream, &broken);
        if (broken) cudaGraphDestroy(broken);
        throw;
      }
      check(cudaStreamEndCapture(stream, &graph.graph_), "cudaStreamEndCapture");
      check(cudaGraphInstantiate(&graph.exec_, graph.graph_, 0), "cudaGraphInstantiate");
      check(cudaGraphLaunch(graph.exec_, stream), "cudaGraphLaunch");  // the graph's warm-up
    } catch (const std::exception& e) {
      cudaGetLastError();
      timing.note = fmt::format("graph capture failed, timed with events: {}", e.what());
      graph.exec_ = nullptr;
    }
  }
  timing.method = graph.exec_ ? "cuda-graph" : "cuda-events";

  std::vector<double> per_call;
  for (int b = 0; b < std::max(batches, 1); ++b) {
    restore();
    events.start(stream);
    if (graph.exec_) {
      check(cudaGraphLaunch(graph.exec_, stream), "cudaGraphLaunch");
    } else {
      for (int c = 0; c < timing.calls_per_batch; ++c) call(c % sets);
    }
    events.stop(stream);
    per_call.push_back(events.seconds() / timing.calls_per_batch);
  }
  std::sort(per_call.begin(), per_call.end());
  timing.batches = static_cast<int>(per_call.size());
  timing.seconds = per_call[per_call.size() / 2];
  restore();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return timing;
}

#endif

}  // namespace tileops::cli
