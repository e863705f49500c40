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
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/experiments/harness.cuh"
#include "kernels/reduction/cuda/softmax.cuh"

using namespace tileops::kernels::cuda;
using namespace tileops::kernels::cuda::reduction;

namespace {

// What a variant leaves out, to find where the time goes: kFull is the softmax, its (max, sum)
// pairs merged in two passes (Note [Softmax statistics] in kernels/reduction/cuda/combine.cuh);
// kChained merges them with SoftmaxMonoid's chain, as the library did before; kNoWrite stores
// only the first element; kNoExp sums x - max instead of its exponential; kCopy reads and writes
// the row without the reductions or the cluster exchange.
enum Mode { kFull, kChained, kNoWrite, kNoExp, kCopy };

// Phase marks (SOFTMAX_MARKS): the global timer read by every block's first thread at its start,
// after the dependent wait, after its loads, after the block reduction, after the cluster
// exchange and at its end. A launch's blocks all start after the previous launch's blocks have
// all exited (no early trigger), so a block's launch is its arrival number over the grid size.
constexpr int kMarkLaunches = 8192;
constexpr int kPhases = 6;
__device__ unsigned long long g_first_start[kMarkLaunches];
__device__ unsigned long long g_last_end[kMarkLaunches];
__device__ unsigned long long g_phase[kMarkLaunches][kPhases];  // block 0's
__device__ unsigned g_arrivals;

__device__ __forceinline__ unsigned long long global_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct Marks {
  unsigned long long t[kPhases];
  __device__ void mark(int phase) {
    if (threadIdx.x == 0) t[phase] = global_now();
  }
  __device__ void record() {
    if (threadIdx.x != 0) return;
    const unsigned launch = atomicAdd(&g_arrivals, 1u) / gridDim.x;
    if (launch >= kMarkLaunches) return;
    atomicMin(&g_first_start[launch], t[0]);
    atomicMax(&g_last_end[launch], t[kPhases - 1]);
    if (blockIdx.x == 0)
      for (int k = 0; k < kPhases; ++k) g_phase[launch][k] = t[k];
  }
};

template <class T, int kCluster, int kVpt, Mode kMode = kFull>
__global__ void __launch_bounds__(1024) softmax_cluster_kernel(SoftmaxParams p) {
  namespace cg = cooperative_groups;
  constexpr int kN = Vec<T>::kSize;
  using P = Pack<T, kN>;
  __shared__ BlockScratch<MaxExpSum> scratch;
  __shared__ BlockScratch<float> float_scratch;
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
  Marks marks;
  marks.mark(0);
  if (kCluster > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  begin_dependent_kernel();
  marks.mark(1);
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
  marks.mark(2);
  if constexpr (kMode == kCopy) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      const int a = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
      if (a < count) v[j].store(out + static_cast<std::int64_t>(a) * kN);
    }
    marks.mark(3);
    marks.mark(4);
    marks.mark(5);
    marks.record();
    return;
  }
  float sum = 0.0f;
  if (max != -INFINITY) {
#pragma unroll
    for (int j = 0; j < kVpt; ++j)
      if (static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x) < count) {
#pragma unroll
        for (int e = 0; e < kN; ++e)
          sum += kMode == kNoExp ? to_float(v[j].v[e]) - max : fast_exp(to_float(v[j].v[e]) - max);
      }
  }
  MaxExpSum stats = kMode == kChained ? block_all<SoftmaxMonoid>(MaxExpSum{max, sum}, scratch)
                                      : block_softmax_stats(MaxExpSum{max, sum}, float_scratch);
  marks.mark(3);
  if constexpr (kCluster > 1) {
    const cg::cluster_group cluster = cg::this_cluster();
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (threadIdx.x < kCluster) *cluster.map_shared_rank(&slots[rank], threadIdx.x) = stats;
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
            : "memory");
    if constexpr (kMode == kChained) {
      stats = slots[0];
#pragma unroll
      for (int r = 1; r < kCluster; ++r) stats = SoftmaxMonoid::combine(stats, slots[r]);
    } else {
      stats = merge_softmax_parts(kCluster, [&](int r) { return slots[r]; });
    }
  }
  marks.mark(4);
  const Normalizer<false, true> normalize(stats);
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    const int a = static_cast<int>(threadIdx.x) + j * static_cast<int>(blockDim.x);
    if (a >= count) continue;
    if (kMode == kNoWrite && (a != 0 || rank != 0)) continue;
    P y;
#pragma unroll
    for (int e = 0; e < kN; ++e) y.v[e] = from_float<T>(normalize(to_float(v[j].v[e])));
    y.store(out + static_cast<std::int64_t>(a) * kN);
  }
  marks.mark(5);
  marks.record();
}

struct Variant {
  const char* name;
  // Launches on the call, or returns false where the variant does not hold the row.
  bool (*launch)(SoftmaxParams, cudaStream_t);
  bool diagnostic = false;  // leaves part of the softmax out (Mode): timed, not checked
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
  if (p.chunks > 1)  // one chunk: the first kernel writes the row
    experiments::launch_kernel(
        reinterpret_cast<const void*>(&softmax_split_write_kernel<false, T, kN>), grid, block, 0,
        stream, args);
  return true;
}

template <class T, int kCluster, int kVpt, Mode kMode = kFull>
bool launch_cluster(SoftmaxParams p, cudaStream_t stream) {
  constexpr int kN = Vec<T>::kSize;
  const std::int64_t slice = (p.length / kN + kCluster - 1) / kCluster;
  const std::int64_t threads = ((slice + kVpt - 1) / kVpt + 31) / 32 * 32;
  if (threads > 1024 || p.length % kN != 0) return false;
  const auto kernel = &softmax_cluster_kernel<T, kCluster, kVpt, kMode>;
  if (kCluster > 8)
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  void* args[] = {&p};
  experiments::launch_kernel(reinterpret_cast<const void*>(kernel),
                             dim3(static_cast<unsigned>(p.rows * kCluster)),
                             dim3(static_cast<unsigned>(threads)), 0, stream, args, true, kCluster);
  return true;
}

double to_double(__nv_bfloat16 v) { return experiments::bf16_to_float(v); }
double to_double(float v) { return v; }
void from_double(double d, __nv_bfloat16& v) {
  v = experiments::float_to_bf16(static_cast<float>(d));
}
void from_double(double d, float& v) { v = static_cast<float>(d); }

// The medians over one graph replay of 64 launches of: the span from the first block's start to
// the last block's end, the gap from one launch's last end to the next one's first start, and
// block 0's phases (Marks), in ns.
void print_marks(const Variant& variant, SoftmaxParams p, cudaStream_t stream) {
  std::vector<unsigned long long> starts(kMarkLaunches, ~0ull), ends(kMarkLaunches, 0);
  CHECK(cudaMemcpyToSymbol(g_first_start, starts.data(), sizeof(g_first_start)));
  CHECK(cudaMemcpyToSymbol(g_last_end, ends.data(), sizeof(g_last_end)));
  const unsigned zero = 0;
  CHECK(cudaMemcpyToSymbol(g_arrivals, &zero, sizeof(zero)));
  constexpr int kLaunches = 64;
  cudaGraph_t captured;
  cudaGraphExec_t replay;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i) variant.launch(p, stream);
  CHECK(cudaStreamEndCapture(stream, &captured));
  CHECK(cudaGraphInstantiate(&replay, captured, 0));
  CHECK(cudaGraphLaunch(replay, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpyFromSymbol(starts.data(), g_first_start, sizeof(g_first_start)));
  CHECK(cudaMemcpyFromSymbol(ends.data(), g_last_end, sizeof(g_last_end)));
  std::vector<unsigned long long> phases(kMarkLaunches * kPhases);
  CHECK(cudaMemcpyFromSymbol(phases.data(), g_phase, sizeof(g_phase)));
  CHECK(cudaGraphExecDestroy(replay));
  CHECK(cudaGraphDestroy(captured));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::vector<double> span, gap;
  std::vector<std::vector<double>> phase(kPhases - 1);
  for (int i = 1; i < kLaunches; ++i) {  // the first launch waits on the graph's start
    span.push_back(static_cast<double>(ends[i] - starts[i]));
    gap.push_back(static_cast<double>(starts[i]) - static_cast<double>(ends[i - 1]));
    for (int k = 1; k < kPhases; ++k)
      phase[k - 1].push_back(
          static_cast<double>(phases[i * kPhases + k] - phases[i * kPhases + k - 1]));
  }
  std::printf(
      "\n    marks %s: span %.0f gap %.0f | wait %.0f load %.0f block %.0f cluster %.0f write %.0f "
      "ns",
      variant.name, median(span), median(gap), median(phase[0]), median(phase[1]), median(phase[2]),
      median(phase[3]), median(phase[4]));
}

template <class T>
void run(const char* dtype, std::int64_t rows, std::int64_t length,
         const std::vector<Variant>& variants, cudaStream_t stream) {
  const std::size_t elements = static_cast<std::size_t>(rows * length);
  const std::size_t bytes = elements * sizeof(T);
  // SOFTMAX_SETS=1 keeps one input, hot in L2 after the first call.
  const char* sets_env = std::getenv("SOFTMAX_SETS");
  const int sets = sets_env != nullptr
                       ? std::atoi(sets_env)
                       : static_cast<int>(std::max<std::size_t>(2, (200u << 20) / bytes + 1));
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
    std::printf(" | %s %.2f us%s", variant.name, us,
                variant.diagnostic || worst <= 1.0 ? "" : " FAIL");
    if (std::getenv("SOFTMAX_MARKS") != nullptr && variant.name[0] == 'c')
      print_marks(variant, p, stream);
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
  if (std::getenv("SOFTMAX_DIAG") != nullptr) {
    // Where the time of one long row goes: the parts of the c16x2 kernel left out in turn, beside
    // a row of the norms' few-rows size.
    const std::vector<Variant> parts = {
        {"online", &launch_online<B>},
        {"c16x2", &launch_cluster<B, 16, 2>},
        {"c16x2-chained", &launch_cluster<B, 16, 2, kChained>},
        {"c8x4", &launch_cluster<B, 8, 4>},
        {"c16x2-nowrite", &launch_cluster<B, 16, 2, kNoWrite>, true},
        {"c16x2-noexp", &launch_cluster<B, 16, 2, kNoExp>, true},
        {"c16x2-copy", &launch_cluster<B, 16, 2, kCopy>, true},
        {"c8x2-copy", &launch_cluster<B, 8, 2, kCopy>, true},
        {"c1x8-copy", &launch_cluster<B, 1, 8, kCopy>, true}};
    for (std::int64_t length : {128256, 16384, 4096}) run<B>("bfloat16", 1, length, parts, stream);
    return 0;
  }
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
