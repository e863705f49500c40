// Host time of the op call path (issue target: a cache-hit RMSNormFwdOp call on a 1x4096 CPU
// tensor with `out` given, excluding the kernel body, median <= 1 us; a kernel_for hit <= 50 ns).
// The kernel body is excluded by forcing a registered no-op implementation (TILEOPS_FORCE).
// Run: build/cpu/bench/tileops_host_bench --benchmark_filter='OpCall|KernelFor'
//      --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "kernels/common/cpu/cpu_kernel.hpp"
#include "kernels/norm/interface.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/ops/norm.hpp"

namespace {

using namespace tileops;

class NoopRMSNormKernel final
    : public kernels::CpuKernel<NoopRMSNormKernel, kernels::RMSNormFwdInterface> {
 public:
  using CpuKernel::CpuKernel;
  void forward(const KernelContext&, const Tensor&, const Tensor*, Tensor&) override {}
};

// Registers the no-op implementation once and forces it for every RMSNormFwdOp built afterwards.
void force_noop_kernel() {
  static const bool registered = [] {
    register_kernel_type("RMSNormFwdOp", KernelType::of<NoopRMSNormKernel>("rms_norm_noop"));
    setenv("TILEOPS_FORCE", "rms_norm_noop", 1);
    return true;
  }();
  (void)registered;
}

void BM_OpCall_RMSNorm_CacheHit(benchmark::State& st) {
  force_noop_kernel();
  RMSNormFwdOp op(Shape{4096});
  Tensor x = Tensor::empty(Shape{1, 4096}, DType::kBFloat16);
  Tensor w = Tensor::empty(Shape{4096}, DType::kBFloat16);
  CallOptions options{Tensor::empty(Shape{1, 4096}, DType::kBFloat16)};
  op(x, w, options);  // selects the target and builds the entry
  for (auto _ : st) benchmark::DoNotOptimize(op(x, w, options));
}
BENCHMARK(BM_OpCall_RMSNorm_CacheHit);

// kernel_for is protected by the op's own forward in real use; this subclass-free probe uses the
// public template, the same code path forward takes.
void BM_KernelFor_Hit(benchmark::State& st) {
  force_noop_kernel();
  RMSNormFwdOp op(Shape{4096});
  kernels::NormCall call;
  call.device = Device::cpu();
  call.n = 4096;
  call.eps = 1e-6;
  call.dtype = DType::kBFloat16;
  call.has_weight = true;
  op.kernel_for<kernels::RMSNormFwdInterface>(call);
  for (auto _ : st) benchmark::DoNotOptimize(op.kernel_for<kernels::RMSNormFwdInterface>(call));
}
BENCHMARK(BM_KernelFor_Hit);

}  // namespace
