// An experiment, not part of the library: softmax over a few long rows (llama3-lm-head, [4,
// 128256]) with each row held on chip by a cluster of blocks, against the library's online path,
// which splits each row into chunks over two dependent kernels (Note [Softmax kernels] in
// kernels/reduction/cuda/softmax.cuh).
//
//   nvcc -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -I. -Iinclude -Isrc \
//        bench/experiments/softmax_cluster.cu -o build/softmax_cluster && build/softmax_cluster
//
// The cluster kernel: block r of a row's cluster of kCluster blocks holds the row's vectors
// [r * S, (r + 1) * S), S = ceil(vectors / kCluster), kVpt vectors a thread in registers; each
// thread's (max, sum of exp(x - max)) is combined over the block, then over the cluster by one
// exchange through distributed shared memory (each block writes its pair into every block's slot,
// one cluster barrier), and the row is written from registers: one read and one write of x, one
// launch, where the online path reads x twice (the second mostly from L2) over two launches.
// Timed as `tileops bench` times small calls: dependent launches replayed from a CUDA graph, the
// inputs rotated over more than 200 MB. Each kernel is checked against a float64 softmax first.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/reduction/cuda/softmax.cuh"

using namespace tileops::kernels::cuda;
using namespace tileops::kernels::cuda::reduction;

namespace {

template <class T, int kCluster, int kVpt>
__global__ void __launch_bounds__(1024) softmax_cluster_kernel(SoftmaxParams p) {
  namespace cg = cooperative_groups;
  constexpr int kN = Vec<T>::kSize;
  using P = Pack<T, kN>;
  __shared__ BlockScratch<MaxExpSum> scratch;
  __shared__ MaxExpSum slots[kCluster];
  const int rank = kCluster > 1 ? static_cast<int>(cg::this_cluster().block_rank()) : 0;
  const int vectors = static_cast<int>(p.length / kN);
  const int slice = (vectors + kCluster - 1) / kCluster;
  const int first = rank * slice;
  const int count = vectors - first < slice ? (vectors > first ? vectors - first : 0) : slice;
  const std::int64_t row = blockIdx.x / kCluster;
  const T* x = static_cast<const T*>(p.x) + row * p.length + static_cast<std::int64_t>(first) * kN;
  T* out = static_cast<T*>(p.out) + row * p.length + static_cast<std::int64_t>(first) * kN;
  if (threadIdx.x == 0 && count > 0) prefetch_l2(x, static_cast<std::uint32_t>(count * 16));
  // A block's shared memory may be written by the others only once it runs: this arrive and the
  // wait before the exchange say so.
  if (kCluster > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  begin_dependent_kernel();
  P v[kVpt];
  float max = -INFINITY;
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int a = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
    if (a < count) {
      v[j] = P::load_once(x + static_cast<std::int64_t>(a) * kN);
#pragma unroll
      for (int e = 0; e < kN; ++e) max = MaxMonoid<float>::combine(max, to_float(v[j].v[e]));
    }
  }
  float sum = 0.0f;
  if (max != -INFINITY) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j)
      if (static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x) < count) {
#pragma unroll
        for (int e = 0; e < kN; ++e) sum += fast_exp(to_float(v[j].v[e]) - max);
      }
  }
  MaxExpSum stats = block_all<SoftmaxMonoid>(MaxExpSum{max, sum}, scratch);
  if constexpr (kCluster > 1) {
    const cg::cluster_group cluster = cg::this_cluster();
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (threadIdx.x < kCluster) *cluster.map_shared_rank(&slots[rank], threadIdx.x) = stats;
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
            : "memory");
    stats = slots[0];
#pragma unroll
    for (int r = 1; r < kCluster; ++r) stats = SoftmaxMonoid::combine(stats, slots[r]);
  }
  const Normalizer<false, true> normalize(stats);
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int a = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
    if (a >= count) continue;
    P y;
#pragma unroll
    for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(v[j].v[e])));
    y.store(out + static_cast<std::int64_t>(a) * kN);
  }
}

// A dependent launch in clusters of `cluster` blocks.
void launch_clustered(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, void** args,
                      unsigned cluster) {
  cudaLaunchAttribute attributes[2]{};
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim = {cluster, 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = cluster > 1 ? 2 : 1;
  CHECK(cudaLaunchKernelExC(&config, kernel, args));
}

struct Variant {
  const char* name;
  // Launches on the call, or returns false where the variant does not hold the row.
  bool (*launch)(SoftmaxParams, cudaStream_t);
};

// The library's online path as its plan launches it for rows < multiprocessors: chunks for two
// blocks a multiprocessor, none under 4096 elements (softmax_plan.cu).
template <class T>
bool launch_online(SoftmaxParams p, cudaStream_t stream) {
  constexpr int kN = Vec<T>::kSize;
  const std::int64_t accesses = p.length / kN;
  std::int64_t chunks =
      std::min<std::int64_t>((2 * 132 + p.rows - 1) / p.rows, (p.length + 4095) / 4096);
  p.chunk_accesses = (accesses + chunks - 1) / chunks;
  p.chunks = (accesses + p.chunk_accesses - 1) / p.chunk_accesses;
  void* args[] = {&p};
  const dim3 grid(static_cast<unsigned>(p.rows * p.chunks)), block(256);
  experiments::launch_kernel(reinterpret_cast<const void*>(&softmax_online_kernel<false, T, kN>),
                             grid, block, 0, stream, args);
  experiments::launch_kernel(
      reinterpret_cast<const void*>(&softmax_split_write_kernel<false, T, kN>), grid, block, 0,
      stream, args);
  return true;
}

template <class T, int kCluster, int kVpt>
bool launch_cluster(SoftmaxParams p, cudaStream_t stream) {
  constexpr int kN = Vec<T>::kSize;
  const std::int64_t slice = (p.length / kN + kCluster - 1) / kCluster;
  const std::int64_t threads = ((slice + kVpt - 1) / kVpt + 31) / 32 * 32;
  if (threads > 1024 || p.length % kN != 0) return false;
  const auto kernel = &softmax_cluster_kernel<T, kCluster, kVpt>;
  if (kCluster > 8)
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  void* args[] = {&p};
  launch_clustered(reinterpret_cast<const void*>(kernel),
                   dim3(static_cast<unsigned>(p.rows * kCluster)),
                   dim3(static_cast<unsigned>(threads)), stream, args, kCluster);
  return true;
}

double to_double(__nv_bfloat16 v) { return experiments::bf16_to_float(v); }
double to_double(float v) { return v; }
void from_double(double d, __nv_bfloat16& v) {
  v = experiments::float_to_bf16(static_cast<float>(d));
}
void from_double(double d, float& v) { v = static_cast<float>(d); }

template <class T>
void run(const char* dtype, std::int64_t rows, std::int64_t length,
         const std::vector<Variant>& variants, cudaStream_t stream) {
  const std::size_t elements = static_cast<std::size_t>(rows * length);
  const std::size_t bytes = elements * sizeof(T);
  const int sets = static_cast<int>(std::max<std::size_t>(2, (200u << 20) / bytes + 1));
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<T> host(elements);
  for (auto& v : host) from_double(normal(rng), v);
  std::vector<void*> xs(sets);
  for (auto& x : xs) {
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  void *out, *partials;
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&partials, rows * 1024 * 8));
  // The float64 reference.
  std::vector<double> want(elements);
  for (std::int64_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (std::int64_t i = 0; i < length; ++i) max = std::max(max, to_double(host[r * length + i]));
    for (std::int64_t i = 0; i < length; ++i)
      sum += std::exp(to_double(host[r * length + i]) - max);
    for (std::int64_t i = 0; i < length; ++i)
      want[r * length + i] = std::exp(to_double(host[r * length + i]) - max) / sum;
  }
  const double tolerance = sizeof(T) == 2 ? 0x1p-7 : 1e-5;
  std::printf("%-9s [%lld, %lld]", dtype, static_cast<long long>(rows),
              static_cast<long long>(length));
  for (const Variant& variant : variants) {
    SoftmaxParams p;
    p.x = xs[0];
    p.out = out;
    p.rows = rows;
    p.length = length;
    p.partials = static_cast<MaxExpSum*>(partials);
    CHECK(cudaMemsetAsync(out, 0xff, bytes, stream));  // NaN poison
    if (!variant.launch(p, stream)) {
      std::printf(" | %s n/a", variant.name);
      continue;
    }
    CHECK(cudaStreamSynchronize(stream));
    std::vector<T> got(elements);
    CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::size_t i = 0; i < elements; ++i) {
      const double err = std::fabs(to_double(got[i]) - want[i]) / (want[i] * tolerance + 1e-12);
      if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
    }
    const double us = experiments::median_launch_us(
        [&](int set) {
          SoftmaxParams q = p;
          q.x = xs[set];
          variant.launch(q, stream);
        },
        sets, 64, stream, true);
    std::printf(" | %s %.2f us%s", variant.name, us, worst <= 1.0 ? "" : " FAIL");
  }
  std::printf("\n");
  for (auto& x : xs) CHECK(cudaFree(x));
  CHECK(cudaFree(out));
  CHECK(cudaFree(partials));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  using B = __nv_bfloat16;
  const std::vector<Variant> bf16 = {
      {"online", &launch_online<B>},        {"c4x4", &launch_cluster<B, 4, 4>},
      {"c8x2", &launch_cluster<B, 8, 2>},   {"c8x4", &launch_cluster<B, 8, 4>},
      {"c16x1", &launch_cluster<B, 16, 1>}, {"c16x2", &launch_cluster<B, 16, 2>}};
  const std::vector<Variant> f32 = {{"online", &launch_online<float>},
                                    {"c8x4", &launch_cluster<float, 8, 4>},
                                    {"c16x2", &launch_cluster<float, 16, 2>},
                                    {"c16x4", &launch_cluster<float, 16, 4>}};
  for (std::int64_t rows : {1, 4, 16}) {
    run<B>("bfloat16", rows, 128256, bf16, stream);
    run<float>("float32", rows, 128256, f32, stream);
  }
  run<B>("bfloat16", 4, 32768 + 8, bf16, stream);
  return 0;
}
