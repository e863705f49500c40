// Timing the cuBLASLt entry's tuning candidates as they are served (Note [Tuning as served] in
// lt_matmul.cpp): bursts of runs captured as CUDA graphs on a stream forked from the call's, timed
// in rounds. Private to kernels/gemm/cuda (it includes the CUDA runtime and cuBLAS headers).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "kernels/gemm/cuda/lt_matmul.hpp"

namespace tileops::kernels::cuda {

// One run of a candidate on one operand set, enqueued on the tuning's stream.
using Launch = std::function<cublasStatus_t(const LtProblem&)>;

// A stream of tuning's own, ordered after the work enqueued on `origin` so far and before what is
// enqueued there once it is destroyed: a non-blocking stream can capture whatever the call's stream
// is (the legacy default stream, torch's, cannot).
class ForkedStream {
 public:
  explicit ForkedStream(cudaStream_t origin);
  ForkedStream(const ForkedStream&) = delete;
  ForkedStream& operator=(const ForkedStream&) = delete;
  // Joins: `origin` waits for everything enqueued here. A failure is reported, not thrown (a
  // destructor); the stream is released once its work completes.
  ~ForkedStream();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t origin_;
  cudaStream_t stream_ = nullptr;
};

// Each candidate's timed burst: a graph replayed, or `runs` runs launched from the host.
struct Burst {
  std::size_t runs = 0;
  std::vector<cudaGraphExec_t> graphs;  // per candidate; nullptr: launched from the host

  Burst() = default;
  Burst(const Burst&) = delete;
  Burst& operator=(const Burst&) = delete;
  ~Burst();

  // Enqueues candidate c's burst on `stream`; false when a run failed.
  bool run(const std::vector<Launch>& launches, std::size_t c, const std::vector<LtProblem>& sets,
           cudaStream_t stream) const;
};

// Every candidate's burst: as many runs as last about 200 us of the first candidate that runs, at
// least three and one per operand set, captured as a graph per candidate where `stream` can
// capture. Marks a failed launch.
void prepare_bursts(const std::vector<Launch>& launches, const std::vector<LtProblem>& sets,
                    cudaStream_t stream, std::vector<bool>& failed, Burst& burst);

// Times the bursts of the candidates whose index is in `which` in `rounds` rounds; appends each
// burst's milliseconds per run to times[c] and marks a failed launch.
void time_in_rounds(const std::vector<Launch>& launches, const Burst& burst,
                    const std::vector<std::size_t>& which, int rounds,
                    const std::vector<LtProblem>& sets, cudaStream_t stream,
                    std::vector<std::vector<float>>& times, std::vector<bool>& failed);

}  // namespace tileops::kernels::cuda
