// Host time of a cache-hit call of every implemented op, one benchmark per op, grouped by family
// (target: <= 300 ns per call with `out` given on the H200 machine's host). The kernel body is
// excluded: every op is forced (TILEOPS_FORCE=noop) onto a registered implementation of its
// interface that does nothing, so what is timed is the call path itself — the signature check, the
// call spec, the kernel_for hit, the output and the record.
// Run: build/cpu/bench/tileops_host_bench --benchmark_filter=Family
//      --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "kernels/activation/interface.hpp"
#include "kernels/attention/interface.hpp"
#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/elementwise/interface.hpp"
#include "kernels/norm/interface.hpp"
#include "kernels/reduction/interface.hpp"
#include "kernels/rope/interface.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/ops.hpp"

namespace {

using namespace tileops;

// An implementation of interface I whose forward does nothing, whatever its arguments. The
// forward may be declared in a base that several interfaces share (the reduction family's).
template <class I, class Forward = decltype(&I::forward)>
class NoopKernel;
template <class I, class Declaring, class... Args>
class NoopKernel<I, void (Declaring::*)(Args...)> final
    : public kernels::CpuKernel<NoopKernel<I, void (Declaring::*)(Args...)>, I> {
 public:
  using kernels::CpuKernel<NoopKernel, I>::CpuKernel;
  void forward(Args...) override {}
};

template <class I>
void register_noop(const char* op) {
  register_kernel_type(op, KernelType::of<NoopKernel<I>>("noop"));
}

// Registers a no-op implementation for every op here and forces it, once.
void force_noop_kernels() {
  static const bool registered = [] {
    register_noop<kernels::RMSNormFwdInterface>("RMSNormFwdOp");
    register_noop<kernels::LayerNormFwdInterface>("LayerNormFwdOp");
    register_noop<kernels::FusedAddRMSNormFwdInterface>("FusedAddRMSNormFwdOp");
    register_noop<kernels::SoftmaxFwdInterface>("SoftmaxFwdOp");
    register_noop<kernels::LogSoftmaxFwdInterface>("LogSoftmaxFwdOp");
    register_noop<kernels::SumFwdInterface>("SumFwdOp");
    register_noop<kernels::MeanFwdInterface>("MeanFwdOp");
    register_noop<kernels::AmaxFwdInterface>("AmaxFwdOp");
    register_noop<kernels::AddFwdInterface>("AddFwdOp");
    register_noop<kernels::MulFwdInterface>("MulFwdOp");
    register_noop<kernels::AlibiFwdInterface>("AlibiFwdOp");
    register_noop<kernels::SiluFwdInterface>("SiluFwdOp");
    register_noop<kernels::GeluFwdInterface>("GeluFwdOp");
    register_noop<kernels::SiluAndMulFwdInterface>("SiluAndMulFwdOp");
    register_noop<kernels::GeluAndMulFwdInterface>("GeluAndMulFwdOp");
    register_noop<kernels::RopeFwdInterface>("RopeFwdOp");
    setenv("TILEOPS_FORCE", "noop", 1);
    return true;
  }();
  (void)registered;
}

Tensor bf16(Shape shape) { return Tensor::empty(std::move(shape), DType::kBFloat16); }
Tensor f32(Shape shape) { return Tensor::empty(std::move(shape), DType::kFloat32); }

// Times op(inputs..., out) after a first call that selects and builds.
template <class OpT, class... Inputs>
void time_calls(benchmark::State& st, OpT& op, const Tensor& out, const Inputs&... inputs) {
  const CallOptions options{out};
  op(inputs..., options);
  for (auto _ : st) benchmark::DoNotOptimize(op(inputs..., options));
}

void BM_Family_Norm_RMSNorm(benchmark::State& st) {
  force_noop_kernels();
  RMSNormFwdOp op(Shape{4096});
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}), std::optional<Tensor>(bf16({4096})));
}
BENCHMARK(BM_Family_Norm_RMSNorm);

void BM_Family_Norm_LayerNorm(benchmark::State& st) {
  force_noop_kernels();
  LayerNormFwdOp op(Shape{4096});
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}), std::optional<Tensor>(bf16({4096})),
             std::optional<Tensor>(bf16({4096})));
}
BENCHMARK(BM_Family_Norm_LayerNorm);

void BM_Family_Norm_FusedAddRMSNorm(benchmark::State& st) {
  force_noop_kernels();
  FusedAddRMSNormFwdOp op;
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}), bf16({1, 4096}), bf16({4096}));
}
BENCHMARK(BM_Family_Norm_FusedAddRMSNorm);

// A composite has no out buffer; its call is its two sub-ops' calls and its own record.
void BM_Family_Norm_ResidualRMSNorm(benchmark::State& st) {
  force_noop_kernels();
  ResidualRMSNormFwdOp op(Shape{4096});
  const Tensor x = bf16({1, 4096}), residual = bf16({1, 4096});
  const std::optional<Tensor> weight = bf16({4096});
  op(x, residual, weight);
  for (auto _ : st) benchmark::DoNotOptimize(op(x, residual, weight));
}
BENCHMARK(BM_Family_Norm_ResidualRMSNorm);

void BM_Family_Reduction_Softmax(benchmark::State& st) {
  force_noop_kernels();
  SoftmaxFwdOp op;
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}));
}
BENCHMARK(BM_Family_Reduction_Softmax);

void BM_Family_Reduction_Sum(benchmark::State& st) {
  force_noop_kernels();
  SumFwdOp op(Shape{-1});
  time_calls(st, op, bf16({1}), bf16({1, 4096}));
}
BENCHMARK(BM_Family_Reduction_Sum);

void BM_Family_Reduction_LogSoftmax(benchmark::State& st) {
  force_noop_kernels();
  LogSoftmaxFwdOp op;
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}));
}
BENCHMARK(BM_Family_Reduction_LogSoftmax);

void BM_Family_Reduction_Mean(benchmark::State& st) {
  force_noop_kernels();
  MeanFwdOp op(Shape{-1});
  time_calls(st, op, bf16({1}), bf16({1, 4096}));
}
BENCHMARK(BM_Family_Reduction_Mean);

// FP8 per-token scaling: the row amax kept as a column.
void BM_Family_Reduction_Amax(benchmark::State& st) {
  force_noop_kernels();
  AmaxFwdOp op(Shape{-1}, true);
  time_calls(st, op, bf16({1, 1}), bf16({1, 4096}));
}
BENCHMARK(BM_Family_Reduction_Amax);

// The libtorch comparison's case: float32 [1, 8] + [1, 8], out given.
void BM_Family_Elementwise_Add(benchmark::State& st) {
  force_noop_kernels();
  AddFwdOp op;
  time_calls(st, op, f32({1, 8}), f32({1, 8}), f32({1, 8}));
}
BENCHMARK(BM_Family_Elementwise_Add);

void BM_Family_Elementwise_AddBroadcast(benchmark::State& st) {
  force_noop_kernels();
  AddFwdOp op;
  time_calls(st, op, bf16({1, 4096}), bf16({1, 4096}), bf16({4096}));
}
BENCHMARK(BM_Family_Elementwise_AddBroadcast);

void BM_Family_Elementwise_Mul(benchmark::State& st) {
  force_noop_kernels();
  MulFwdOp op;
  time_calls(st, op, f32({1, 8}), f32({1, 8}), f32({1, 8}));
}
BENCHMARK(BM_Family_Elementwise_Mul);

void BM_Family_Attention_Alibi(benchmark::State& st) {
  force_noop_kernels();
  AlibiFwdOp op(32, 16, "cpu");
  const CallOptions options{f32({32, 16, 16})};
  op(options);
  for (auto _ : st) benchmark::DoNotOptimize(op(options));
}
BENCHMARK(BM_Family_Attention_Alibi);

// Decode-sized activations of Llama-3.1-8B's FFN (intermediate 14336).
void BM_Family_Activation_Silu(benchmark::State& st) {
  force_noop_kernels();
  SiluFwdOp op;
  time_calls(st, op, bf16({1, 14336}), bf16({1, 14336}));
}
BENCHMARK(BM_Family_Activation_Silu);

void BM_Family_Activation_Gelu(benchmark::State& st) {
  force_noop_kernels();
  GeluFwdOp op("tanh");
  time_calls(st, op, bf16({1, 14336}), bf16({1, 14336}));
}
BENCHMARK(BM_Family_Activation_Gelu);

void BM_Family_Activation_SiluAndMul(benchmark::State& st) {
  force_noop_kernels();
  SiluAndMulFwdOp op;
  time_calls(st, op, bf16({1, 14336}), bf16({1, 2 * 14336}));
}
BENCHMARK(BM_Family_Activation_SiluAndMul);

void BM_Family_Activation_GeluAndMul(benchmark::State& st) {
  force_noop_kernels();
  GeluAndMulFwdOp op;
  time_calls(st, op, bf16({1, 14336}), bf16({1, 2 * 14336}));
}
BENCHMARK(BM_Family_Activation_GeluAndMul);

// Llama-3.1-8B decode of one token, in place on query and key: no output, no out buffer.
void BM_Family_Rope_Rope(benchmark::State& st) {
  force_noop_kernels();
  RopeFwdOp op;
  const Tensor positions = Tensor::empty({1}, DType::kInt64);
  const Tensor query = bf16({1, 32, 128}), key = bf16({1, 8, 128}), cache = bf16({4096, 128});
  op(positions, query, key, cache);
  for (auto _ : st) {
    op(positions, query, key, cache);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Family_Rope_Rope);

}  // namespace
