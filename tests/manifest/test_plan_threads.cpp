// One plan shared by threads: constructions at different construction points specialise the plan
// under its lock while other threads run the lock-free call check.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "manifest_test_util.hpp"

namespace tileops::manifest {
namespace {

using testing::Inputs;
using testing::meta;
using testing::plan_from;

constexpr const char* kToy = R"yaml(
ModeFwdOp:
  family: toy
  status: spec-only
  signature:
    forall: {S: Shape, N: Dim, T: "DType[float16 | float32]"}
    params:
      inplace: {type: bool, default: false}
      mode: {type: "'a' | 'b' | 'c' | 'd'", default: a}
      width: {type: int}
    inputs:
      x: {dtype: T, shape: "[*S, N]", mutated: inplace}
    outputs:
      y: {dtype: T, shape: "[*S, N * width]", alias: x}
  workloads: [{label: w, S: [2], N: 4, width: 1, dtype_cases: [{T: float16}]}]
  roofline: {flops: "prod(S) * N * (2 if mode == 'a' else 1)"}
)yaml";

TEST(PlanThreads, ConcurrentConstructionAndChecksAgree) {
  auto plan = plan_from(kToy, "ModeFwdOp");
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  const char* modes[] = {"a", "b", "c", "d"};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const bool inplace = (t + i) % 2 == 0;
        const std::int64_t width = 1 + (t + i) % 3;
        const char* mode = modes[(t * 7 + i) % 4];
        ConstructionState state = plan->construct(
            {{"inplace", Value(inplace)}, {"mode", Value(mode)}, {"width", Value(width)}});
        const std::int64_t rows = 1 + t, n = 2 + i % 5;
        SignatureCall call = plan->check(state, Inputs{meta({rows, n}, DType::kFloat32)});
        bool ok = call.output(0).shape == Shape{rows, n * width} &&
                  call.output(0).dtype == DType::kFloat32 &&
                  call.written().size() == (inplace ? 1u : 0u) &&
                  plan->effect_branch(state, call.branch_key()).operator_name ==
                      (inplace ? "tileops::toy_mode_fwd_writes_x" : "tileops::toy_mode_fwd") &&
                  plan->eval_roofline(call).flops == rows * n * (mode[0] == 'a' ? 2 : 1);
        if (!ok) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(PlanThreads, SameConstructionPointSharesOneSpecialisation) {
  auto plan = plan_from(kToy, "ModeFwdOp");
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const detail::Specialization>> points(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      points[t] = plan->construct({{"mode", Value("c")}, {"width", Value(t + 1)}}).point;
    });
  for (auto& th : threads) th.join();
  for (const auto& p : points) EXPECT_EQ(p, points[0]);
}

}  // namespace
}  // namespace tileops::manifest
