// What the kernel experiments of this folder share: a checked CUDA call, bfloat16 on the host and
// the median time of a launch over rotated input sets. Experiments only; the library times with
// `tileops bench` (Note [CUDA bench] in tools/bench_cuda.cpp), which these imitate.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace experiments {

inline float bf16_to_float(__nv_bfloat16 v) {
  unsigned short bits;
  std::memcpy(&bits, &v, 2);
  const unsigned int word = static_cast<unsigned int>(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

// Round to nearest even; the experiments' values are finite.
inline __nv_bfloat16 float_to_bf16(float f) {
  unsigned int word;
  std::memcpy(&word, &f, 4);
  word += 0x7fffu + ((word >> 16) & 1u);
  const unsigned short bits = static_cast<unsigned short>(word >> 16);
  __nv_bfloat16 v;
  std::memcpy(&v, &bits, 2);
  return v;
}

// The median over 15 batches of the time per launch (us) of `launch(set)`, the batches cycling
// through `sets` input sets, `per_batch` launches each between two events, after a warm-up of
// every set. With `graph`, a batch is captured once on `stream` (which must not be the legacy
// stream) and replayed: launches too short for the host to keep up with are timed back to back.
template <class Launch>
double median_launch_us(Launch&& launch, int sets, int per_batch, cudaStream_t stream = nullptr,
                        bool graph = false) {
  for (int i = 0; i < std::max(3, sets); ++i) launch(i % sets);
  CHECK(cudaGetLastError());
  cudaGraphExec_t replay = nullptr;
  if (graph) {
    cudaGraph_t captured;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < per_batch; ++i) launch(i % sets);
    CHECK(cudaStreamEndCapture(stream, &captured));
    CHECK(cudaGraphInstantiate(&replay, captured, 0));
    CHECK(cudaGraphDestroy(captured));
    CHECK(cudaGraphLaunch(replay, stream));
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> per_launch;
  for (int batch = 0; batch < 15; ++batch) {
    CHECK(cudaEventRecord(start, stream));
    if (replay != nullptr) {
      CHECK(cudaGraphLaunch(replay, stream));
    } else {
      for (int i = 0; i < per_batch; ++i) launch(i % sets);
    }
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    per_launch.push_back(ms * 1000.0 / per_batch);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  if (replay != nullptr) CHECK(cudaGraphExecDestroy(replay));
  std::sort(per_launch.begin(), per_launch.end());
  return per_launch[per_launch.size() / 2];
}

// Launches `kernel` on `stream` with `args`, as a dependent kernel (programmatic stream
// serialization, as the library's launch_dependent does) unless `dependent` is false, and in
// clusters of `cluster` blocks along x when above 1.
inline void launch_kernel(const void* kernel, dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, void** args, bool dependent = true,
                          unsigned cluster = 1) {
  cudaLaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (dependent) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count++].val.clusterDim = {cluster, 1, 1};
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = count > 0 ? attributes : nullptr;
  config.numAttrs = count;
  CHECK(cudaLaunchKernelExC(&config, kernel, args));
}

// What ptxas and the occupancy calculator say of `kernel` at `threads` threads and `smem` bytes of
// dynamic shared memory on device 0: registers a thread, whether it spills, blocks per
// multiprocessor and the blocks one wave places.
struct KernelFacts {
  int registers;
  bool spills;
  int per_sm;
  int per_wave;
};

template <class Kernel>
KernelFacts kernel_facts(Kernel kernel, int threads, size_t smem = 0) {
  cudaFuncAttributes attributes{};
  CHECK(cudaFuncGetAttributes(&attributes, kernel));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return {attributes.numRegs, attributes.localSizeBytes > 0, per_sm, per_sm * sms};
}

}  // namespace experiments
