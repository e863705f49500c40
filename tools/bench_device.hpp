// How `tileops bench` times a case on a CUDA device (tools/bench_cuda.cpp, CUDA builds only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"

namespace tileops::cli {

// When the calls of a case are replayed from a CUDA graph instead of being launched one by one.
enum class GraphMode { kAuto, kAlways, kNever };

struct DeviceTiming {
  double seconds = 0.0;  // median over batches of the time per call
  int batches = 0;
  int calls_per_batch = 0;
  int sets = 0;                        // input sets the calls cycle through
  std::int64_t working_set_bytes = 0;  // bytes of all the sets' inputs and outputs
  std::string method;                  // "cuda-events" or "cuda-graph"
  std::string note;                    // why a graph was not used, when it was wanted
};

// Times op's calls on `device` (Note [CUDA bench] in bench_cuda.cpp): `inputs` is one set of
// device inputs, which is replicated into enough sets to exceed the L2 several times over;
// `warmup` untimed calls, then `batches` timed batches. OpNotAvailableError in a CPU-only build.
DeviceTiming time_on_cuda(Op& op, const std::vector<std::optional<Tensor>>& inputs, Device device,
                          int warmup, int batches, GraphMode graph);

// The time per kernel of empty kernels replayed from a CUDA graph on `device`, the floor of every
// launch-bound case (the decode target is within 1 us of it); 0 in a CPU-only build.
double empty_kernel_seconds(Device device);

// The device's name ("NVIDIA H200"), for the report; "" in a CPU-only build.
std::string cuda_device_name(Device device);

}  // namespace tileops::cli
