// An experiment, not part of the library: CUB's device reductions on SumFwdOp's workloads, the
// question #10 leaves open ("CUB device reductions where they fit"): row sums of bfloat16
// [rows, cols] with cub::DeviceSegmentedReduce::Sum (float32 accumulation and output, one segment
// a row), and the sum of every element with cub::DeviceReduce::Sum, timed as the library's
// `tileops bench SumFwdOp` times them (sets rotated beyond 4x the L2, median batch; graphs, so
// that CUB's two-call host API does not count). GB/s counts the bytes read and written, as the
// manifest's roofline does; run `tileops bench SumFwdOp` in the same call for the library.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/experiments/cub_reduce.cu -o build/cub_reduce && build/cub_reduce
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <vector>

#include "bench/experiments/harness.cuh"

namespace {

__global__ void fill(__nv_bfloat16* p, long long n, unsigned seed) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    p[i] = __float2bfloat16(static_cast<float>(h % 2001) / 1000.0f - 1.0f);  // [-1, 1], not all 0
  }
}

// bfloat16 read as float32, so that CUB accumulates in float32 (its accumulator is the type of
// init + input).
struct ToFloat {
  __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

struct Shape {
  long long rows, cols;
  bool all;  // every element into one sum
};

}  // namespace

int main() {
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // SumFwdOp's hidden-state row, the bandwidth rows and the all-dims sum of the largest; then
  // all-dims sums at the manifest's sizes: [2048, 4096] (Amax's fp8-per-tensor) and [2048, 8192],
  // the bytes of Sum's float32 hidden-state-full ([2048, 4096]).
  const Shape shapes[] = {{2048, 4096, false}, {4096, 16384, false}, {16384, 8192, false},
                          {16384, 8192, true}, {2048, 4096, true},   {2048, 8192, true}};
  for (const Shape& s : shapes) {
    const long long n = s.rows * s.cols;
    const long long outputs = s.all ? 1 : s.rows;
    const int sets = static_cast<int>(std::max<long long>(2, 4LL * l2 / (n * 2) + 1));
    std::vector<__nv_bfloat16*> in(sets);
    std::vector<float*> out(sets);
    for (int k = 0; k < sets; ++k) {
      CHECK(cudaMalloc(&in[k], n * 2));
      CHECK(cudaMalloc(&out[k], outputs * 4));
      fill<<<1024, 256, 0, stream>>>(in[k], n, 17 + k);
    }
    std::vector<long long> offsets_host(s.rows + 1);
    for (long long r = 0; r <= s.rows; ++r) offsets_host[r] = r * s.cols;
    long long* offsets = nullptr;
    CHECK(cudaMalloc(&offsets, (s.rows + 1) * 8));
    CHECK(cudaMemcpy(offsets, offsets_host.data(), (s.rows + 1) * 8, cudaMemcpyHostToDevice));
    const auto floats = [&](int k) { return thrust::make_transform_iterator(in[k], ToFloat{}); };
    std::size_t temp_bytes = 0;
    if (s.all)
      CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, floats(0), out[0], n, stream));
    else
      CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, floats(0), out[0], s.rows, offsets,
                                            offsets + 1, stream));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 16)));
    const auto launch = [&](int k) {
      std::size_t bytes = temp_bytes;
      if (s.all)
        CHECK(cub::DeviceReduce::Sum(temp, bytes, floats(k), out[k], n, stream));
      else
        CHECK(cub::DeviceSegmentedReduce::Sum(temp, bytes, floats(k), out[k], s.rows, offsets,
                                              offsets + 1, stream));
    };
    // Row 0 (or the whole sum) against float64, so that the timing is of a right answer.
    launch(0);
    CHECK(cudaStreamSynchronize(stream));
    const long long checked = s.all ? n : s.cols;
    std::vector<__nv_bfloat16> host(checked);
    CHECK(cudaMemcpy(host.data(), in[0], checked * 2, cudaMemcpyDeviceToHost));
    double expected = 0.0, magnitude = 0.0;
    for (const auto v : host) {
      expected += experiments::bf16_to_float(v);
      magnitude += std::fabs(experiments::bf16_to_float(v));
    }
    float got = 0.0f;
    CHECK(cudaMemcpy(&got, out[0], 4, cudaMemcpyDeviceToHost));
    const bool ok = std::fabs(got - expected) <= 1e-5 * magnitude + 1e-3;
    const double us = experiments::median_launch_us(launch, sets, std::max(sets, 64), stream, true);
    const double bytes = n * 2.0 + outputs * 2.0;  // the library writes bfloat16 sums
    std::printf("%-9s [%6lld, %6lld] %-22s %9.2f us %8.0f GB/s %6.1f%%  %s\n",
                s.all ? "all dims" : "rows", s.rows, s.cols,
                s.all ? "cub::DeviceReduce" : "cub::DeviceSegmented", us, bytes / us / 1e3,
                100.0 * bytes / us / 1e3 / 4250.0, ok ? "ok" : "WRONG");
    for (int k = 0; k < sets; ++k) {
      CHECK(cudaFree(in[k]));
      CHECK(cudaFree(out[k]));
    }
    CHECK(cudaFree(offsets));
    CHECK(cudaFree(temp));
  }
  return 0;
}
