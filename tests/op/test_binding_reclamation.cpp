// Retired binding groups are freed once no call can still be reading them (Note [Binding
// reclamation] in src/op/read_section.hpp), so failing calls and resets keep a bounded number;
// reset_binding walks sub-ops that hold their parent back once.
#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "op/binding.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

constexpr int kLoops = 10000;

std::size_t retired(const Op& op) { return detail::Binding::retired_count(op); }

TEST(BindingReclamation, FailingCallsThatSelectKeepABoundedNumberOfRetiredGroups) {
  std::vector<std::weak_ptr<Scaling>> entries;
  ToyOp op(with_selection_table(toy_class(unique_op("FailsAfterBuilding"))), {}, kBuiltin,
           [&](ToyOp& self, const CallArgs& args) -> CallResult {
             // Each call selects, builds an entry in its group and fails, so the group is retired.
             entries.push_back(self.kernel_for<Scaling>(scaling(args.input(0).shape()[0])));
             throw std::runtime_error("forward failed");
           });
  for (int i = 0; i < kLoops; ++i) EXPECT_THROW(op(cpu({4})), std::runtime_error);
  EXPECT_EQ(op.forward_calls(), kLoops);
  EXPECT_LE(retired(op), 2u);
  // The entries the retired groups cached went with them.
  for (std::size_t i = 0; i + 2 < entries.size(); ++i) ASSERT_TRUE(entries[i].expired()) << i;
}

TEST(BindingReclamation, CudaTensorsPassedToACpuOnlyOpInALoop) {
  FakeAccelerator accel;
  ToyOp op(with_selection_table(toy_class(unique_op("CpuOnly"))));
  // cuda:37: a device no test's detector claims, so the in-tree kernels are selected and refuse.
  for (int i = 0; i < kLoops; ++i) EXPECT_THROW(op(on_cuda({4}, 37)), OpNotAvailableError);
  EXPECT_LE(retired(op), 2u);
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);
}

TEST(BindingReclamation, ResetsOutsideAnyCallFreeAtOnce) {
  ToyOp op(with_selection_table(toy_class(unique_op("Resets"))));
  for (int i = 0; i < kLoops; ++i) {
    op(cpu({20}));
    op.reset_binding();
  }
  EXPECT_EQ(retired(op), 0u);
}

// An op with no call-time tensor and no device param: its calls have no device to select from.
constexpr std::string_view kNoDeviceEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    params:
      n: {type: int, default: 4}
    inputs: {}
    outputs:
      y: {dtype: float32, shape: "[n]"}
  workloads: [{label: w}]
  roofline: {flops: "n"}
)yaml";

TEST(BindingReclamation, AFailingCallThatSelectedNothingRetiresNothing) {
  // No accelerator: a call that no tensor, param or device places has no device to select for.
  const auto accelerator_before = accelerator();
  install_accelerator(nullptr);
  ToyOp op(toy_class(unique_op("NoDevice"), kNoDeviceEntry), {}, std::nullopt,
           [](ToyOp&, const CallArgs&) -> CallResult { throw std::runtime_error("no"); });
  for (int i = 0; i < 100; ++i) EXPECT_THROW(op.call(Inputs{}), std::runtime_error);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(retired(op), 0u);
  install_accelerator(accelerator_before);
}

// A group is kept while a call that began before it was retired is still running, and freed by
// the first retirement after that call ends.
TEST(BindingReclamation, AGroupIsKeptWhileACallThatMayReadItRuns) {
  std::latch inside(1), resets_done(1);
  ToyOp op(with_selection_table(toy_class(unique_op("LongCall"))), {}, std::nullopt,
           [&](ToyOp& self, const CallArgs& args) -> CallResult {
             std::shared_ptr<Scaling> entry = self.kernel_for<Scaling>(scaling(20));
             inside.count_down();
             resets_done.wait();
             // The entry outlived the resets; the next look-up reads the current group.
             EXPECT_EQ(entry->key(), "band");
             EXPECT_EQ(self.kernel_for<Scaling>(scaling(20))->key(), "band");
             return self.compute(args);
           });
  std::thread caller([&] { op(cpu({20})); });
  inside.wait();
  for (int i = 0; i < 100; ++i) op.reset_binding();
  EXPECT_GE(retired(op), 100u);
  resets_done.count_down();
  caller.join();
  op.reset_binding();
  EXPECT_EQ(retired(op), 0u);
}

// A sub-op class whose instances may also be built from a composite class of the same C++ type,
// so that two such instances can hold each other.
class Looper : public ToyOp {
 public:
  static const OpClass& op_class() {
    static const OpClass& cls = with_selection_table(toy_class("ToyLooperSubFwdOp"));
    return cls;
  }
  Looper(ParamMap params, std::optional<Target> target)
      : ToyOp(op_class(), std::move(params), std::move(target)) {}
  explicit Looper(const OpClass& cls) : ToyOp(cls) {}
};

constexpr std::string_view kLoopEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[N]"}
      w: {dtype: T, shape: "[N]", optional: true}
    outputs:
      y: {dtype: T, shape: "[N]", buffer: out}
  composition:
    stages:
      - {name: loop, op: ToyLooperSubFwdOp}
  workloads:
    - {label: a, N: 4, some: [w], dtype_cases: [{T: float16}]}
    - {label: b, N: 4, dtype_cases: [{T: float16}]}
  roofline: {flops: "N"}
)yaml";

TEST(BindingReclamation, ResetBindingWalksASubOpThatHoldsItsParentOnce) {
  const OpClass& cls =
      with_selection_table(toy_class(unique_op("Loop"), kLoopEntry)).stage<Looper>("loop");
  Looper parent(cls);
  auto sub = std::make_shared<Looper>(cls);
  parent.hold<Looper>("loop", Identity(), sub);
  // The sub-op holds its parent back, without owning it.
  sub->hold<Looper>("loop", Identity(), std::shared_ptr<Looper>(&parent, [](Looper*) {}));
  parent(cpu({20}));
  (*sub)(cpu({20}));
  ASSERT_EQ(parent.iter_kernels().size(), 2u);  // one entry each; the walk sees each op once
  parent.request_tune();
  parent.reset_binding();
  EXPECT_EQ(parent.serving_target(), std::nullopt);
  EXPECT_EQ(sub->serving_target(), std::nullopt);
  EXPECT_TRUE(parent.iter_kernels().empty());
}

}  // namespace
}  // namespace tileops::optest
