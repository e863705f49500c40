// The tuning timer (tuning_bursts.hpp; Note [Tuning as served] in lt_matmul.cpp).
#include "kernels/gemm/cuda/tuning_bursts.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "cuda/check.hpp"

namespace tileops::kernels::cuda {
namespace {

// A burst's runs: at least kBurst, and as many as last about kBurstMicroseconds, at most kMaxBurst.
constexpr std::size_t kBurst = 3;
constexpr double kBurstMicroseconds = 200.0;
constexpr std::size_t kMaxBurst = 64;

// The error, if any, of a call in a destructor: reported, never raised.
void report(cudaError_t status, const char* call, int line) noexcept {
  if (status != cudaSuccess) tileops::cuda::detail::report_cuda_error(status, call, __FILE__, line);
}

// A graph of `burst` runs of `launch` cycling through `sets`, captured on `stream`; nullptr when
// the stream cannot capture, and when a run fails in the capture (then `failed` is set).
cudaGraphExec_t capture_burst(const Launch& launch, std::size_t burst,
                              const std::vector<LtProblem>& sets, cudaStream_t stream,
                              bool& failed) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  cudaGraph_t graph = nullptr;
  try {
    for (std::size_t run = 0; run < burst && status == CUBLAS_STATUS_SUCCESS; ++run)
      status = launch(sets[run % sets.size()]);
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    throw;
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (status != CUBLAS_STATUS_SUCCESS)
    failed = true;
  else if (ended != cudaSuccess || !graph || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    exec = nullptr;
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  return exec;
}

// Milliseconds per run of one host-launched burst of `runs` runs of `launch`, or nullopt when a
// run fails.
std::optional<float> time_host_burst(const Launch& launch, std::size_t runs,
                                     const std::vector<LtProblem>& sets, cudaStream_t stream) {
  cudaEvent_t start, stop;
  TILEOPS_CUDA_CHECK(cudaEventCreate(&start));
  TILEOPS_CUDA_CHECK(cudaEventCreate(&stop));
  bool ok = true;
  TILEOPS_CUDA_CHECK(cudaEventRecord(start, stream));
  for (std::size_t r = 0; r < runs && ok; ++r)
    ok = launch(sets[r % sets.size()]) == CUBLAS_STATUS_SUCCESS;
  TILEOPS_CUDA_CHECK(cudaEventRecord(stop, stream));
  TILEOPS_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  TILEOPS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok) return std::nullopt;
  return ms / static_cast<float>(runs);
}

}  // namespace

ForkedStream::ForkedStream(cudaStream_t origin) : origin_(origin) {
  TILEOPS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cudaEvent_t forked = nullptr;
  TILEOPS_CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  TILEOPS_CUDA_CHECK(cudaEventRecord(forked, origin_));
  TILEOPS_CUDA_CHECK(cudaStreamWaitEvent(stream_, forked, 0));
  cudaEventDestroy(forked);
}

ForkedStream::~ForkedStream() {
  cudaEvent_t joined = nullptr;
  if (cudaEventCreateWithFlags(&joined, cudaEventDisableTiming) == cudaSuccess) {
    report(cudaEventRecord(joined, stream_), "cudaEventRecord(joined, stream_)", __LINE__);
    report(cudaStreamWaitEvent(origin_, joined, 0), "cudaStreamWaitEvent(origin_, joined, 0)",
           __LINE__);
    cudaEventDestroy(joined);
  } else {
    report(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(stream_)", __LINE__);
  }
  cudaStreamDestroy(stream_);
}

Burst::~Burst() {
  for (cudaGraphExec_t g : graphs)
    if (g) cudaGraphExecDestroy(g);
}

bool Burst::run(const std::vector<Launch>& launches, std::size_t c,
                const std::vector<LtProblem>& sets, cudaStream_t stream) const {
  if (graphs[c]) {
    TILEOPS_CUDA_CHECK(cudaGraphLaunch(graphs[c], stream));
    return true;
  }
  for (std::size_t r = 0; r < runs; ++r)
    if (launches[c](sets[r % sets.size()]) != CUBLAS_STATUS_SUCCESS) return false;
  return true;
}

// Every candidate's burst (Note [Tuning as served]): as many runs as last about
// kBurstMicroseconds of the first candidate that runs, at least kBurst and one per operand set,
// captured as a graph per candidate where the stream can capture. Marks a failed launch.
void prepare_bursts(const std::vector<Launch>& launches, const std::vector<LtProblem>& sets,
                    cudaStream_t stream, std::vector<bool>& failed, Burst& burst) {
  const std::size_t least = std::max(kBurst, sets.size());
  burst.runs = least;
  for (std::size_t c = 0; c < launches.size(); ++c) {
    if (failed[c]) continue;
    const std::optional<float> ms = time_host_burst(launches[c], least, sets, stream);
    if (!ms) {
      failed[c] = true;
      continue;
    }
    if (*ms > 0) {
      const auto wanted = static_cast<std::size_t>(std::ceil(kBurstMicroseconds / (1000.0 * *ms)));
      burst.runs = std::clamp(wanted, least, std::max(least, kMaxBurst));
    }
    break;
  }
  burst.graphs.assign(launches.size(), nullptr);
  for (std::size_t c = 0; c < launches.size(); ++c) {
    if (failed[c]) continue;
    bool capture_failed = false;
    burst.graphs[c] = capture_burst(launches[c], burst.runs, sets, stream, capture_failed);
    if (capture_failed) failed[c] = true;
  }
}

// Times the bursts of the candidates whose index is in `which` in `rounds` rounds; appends each
// burst's milliseconds per run to times[c] and marks a failed launch.
void time_in_rounds(const std::vector<Launch>& launches, const Burst& burst,
                    const std::vector<std::size_t>& which, int rounds,
                    const std::vector<LtProblem>& sets, cudaStream_t stream,
                    std::vector<std::vector<float>>& times, std::vector<bool>& failed) {
  const std::size_t count = which.size();
  const auto total = static_cast<std::size_t>(rounds) * count;
  std::vector<cudaEvent_t> events(2 * total);
  for (cudaEvent_t& event : events) TILEOPS_CUDA_CHECK(cudaEventCreate(&event));
  for (std::size_t timing = 0; timing < total; ++timing) {
    const std::size_t c = which[timing % count];
    if (failed[c]) continue;
    TILEOPS_CUDA_CHECK(cudaEventRecord(events[2 * timing], stream));
    failed[c] = !burst.run(launches, c, sets, stream);
    TILEOPS_CUDA_CHECK(cudaEventRecord(events[2 * timing + 1], stream));
  }
  TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::size_t timing = 0; timing < total; ++timing) {
    const std::size_t c = which[timing % count];
    float ms = 0;
    if (!failed[c]) {
      TILEOPS_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * timing], events[2 * timing + 1]));
      times[c].push_back(ms / static_cast<float>(burst.runs));
    }
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
}

}  // namespace tileops::kernels::cuda
