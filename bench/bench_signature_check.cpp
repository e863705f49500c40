// Host time of the signature plan's call check: RMSNormFwdOp on a rank-2 input (issue target:
// median <= 300 ns on the 2-core dev machine). Run: build/cpu/bench/tileops_host_bench
// --benchmark_filter=SignatureCheck --benchmark_repetitions=10
// --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/signature_plan.hpp"

namespace {

using tileops::DType;
using tileops::ParamMap;
using tileops::Shape;
using tileops::Tensor;
using tileops::manifest::Manifest;
using tileops::manifest::SignaturePlan;

struct RmsNormCase {
  std::shared_ptr<const SignaturePlan> plan;
  tileops::manifest::ConstructionState state;
  std::vector<std::optional<Tensor>> inputs;
  Tensor out;

  RmsNormCase(bool with_weight, bool with_out) {
    const auto& m = Manifest::builtin();
    for (const auto& e : m.entries())
      if (e->name == "RMSNormFwdOp") plan = SignaturePlan::build(e);
    state = plan->construct(ParamMap{{"normalized_shape", tileops::Value(Shape{4096})}});
    inputs.emplace_back(Tensor::empty(Shape{2048, 4096}, DType::kBFloat16));
    inputs.emplace_back(with_weight
                            ? std::optional<Tensor>(Tensor::empty(Shape{4096}, DType::kBFloat16))
                            : std::nullopt);
    if (with_out) out = Tensor::empty(Shape{2048, 4096}, DType::kBFloat16);
  }
};

void BM_SignatureCheck_RMSNorm(benchmark::State& st) {
  RmsNormCase c(st.range(0) != 0, st.range(1) != 0);
  const Tensor* out = c.out.defined() ? &c.out : nullptr;
  for (auto _ : st) {
    auto call = c.plan->check(c.state, c.inputs, out);
    benchmark::DoNotOptimize(call);
  }
}
BENCHMARK(BM_SignatureCheck_RMSNorm)
    ->ArgNames({"weight", "out"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1});

// The same check into a reused record, as Op::run_call makes it (Note [Record reuse]).
void BM_SignatureCheckInto_RMSNorm(benchmark::State& st) {
  RmsNormCase c(st.range(0) != 0, st.range(1) != 0);
  const Tensor* out = c.out.defined() ? &c.out : nullptr;
  auto record = SignaturePlan::new_record();
  for (auto _ : st) {
    c.plan->check_into(*record, c.state, c.inputs, out);
    benchmark::DoNotOptimize(record->empty_write());
  }
}
BENCHMARK(BM_SignatureCheckInto_RMSNorm)
    ->ArgNames({"weight", "out"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1});

}  // namespace
