// The seeds' class-structure Tables 2-4 and composite-ops Table 1 (docs/seeds.md), one test per
// row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

using ::testing::StartsWith;

CallResult fail_after_compute(ToyOp& self, const CallArgs& args) {
  self.compute(args);
  throw std::runtime_error("forward failed");
}

// ---------------------------------------------------------------------------------------------
// Table 2: instance state groups, and what undoing a target selection does to each.

TEST(InstanceStateTable2, Row1_ConstructionGroupNeverChanges) {
  const std::string name = unique_op("Construction");
  ToyOp op(with_selection_table(toy_class(name)), {{"factor", Value(2)}}, kBuiltin,
           fail_after_compute);
  const std::string key = op.instance_key();
  const ParamMap params = op.params();
  EXPECT_THROW(op(cpu({4})), std::runtime_error);  // selected, then undone
  op.reset_binding();
  op.set_body({});
  op(cpu({20}));
  EXPECT_EQ(op.instance_key(), key);
  EXPECT_EQ(op.params().repr(), params.repr());
  EXPECT_EQ(op.target(), kBuiltin);
  EXPECT_EQ(op.key_for("scale", scaling(20)), "band");  // the installed table
}

TEST(InstanceStateTable2, Row2_BindingGroupIsResetOnUndo) {
  const std::string name = unique_op("Binding");
  const std::string target = unique("binding_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp served(with_selection_table(toy_class(name)), {}, Target::named(target));
  served(cpu({4}));
  ASSERT_EQ(served.built_entries("scale").size(), 1u);
  served.reset_binding();
  EXPECT_EQ(served.serving_target(), std::nullopt);
  EXPECT_TRUE(served.built_entries("scale").empty());
  served(cpu({4}));
  EXPECT_EQ(log->build_count(), 2);  // the target's kernel cache was emptied

  ToyOp builtin(with_selection_table(toy_class(unique_op("Binding"))));
  auto entry = builtin.kernel_for<Scaling>(scaling(5));
  builtin(cpu({5}));
  builtin.reset_binding();
  EXPECT_EQ(builtin.serving_target(), std::nullopt);
  EXPECT_TRUE(builtin.built_entries("scale").empty());
  EXPECT_TRUE(builtin.iter_kernels().empty());
  EXPECT_NE(builtin.kernel_for<Scaling>(scaling(5)), entry);  // entries_by_call emptied too
}

TEST(InstanceStateTable2, Row3_RunningGroupIsKeptOnUndo) {
  ToyOp op(composite_class(unique_op("Running")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) { return through(self, a, {"first"}); });
  op(cpu({4}));
  op.request_tune();
  auto record = op.last_call();
  auto held = op.held_delegates();
  const manifest::EffectBranch branch = op.effect_branch(Inputs{cpu({4}), std::nullopt}, false);
  op.reset_binding();
  EXPECT_EQ(op.last_call(), record);
  EXPECT_EQ(op.held_delegates(), held);
  EXPECT_TRUE(op.tune_requested());
  // The effect branches are the manifest's and the params', not the target's.
  EXPECT_EQ(op.effect_branch(Inputs{cpu({4}), std::nullopt}, false), branch);
}

// ---------------------------------------------------------------------------------------------
// Table 3: the binding group's initial values.

TEST(InstanceStateTable3, Row1_TargetBuilderStartsUnresolved) {
  // Unresolved means: nothing was selected, and the first call that runs selects (here by
  // asking the detectors, which construction does not).
  FakeAccelerator accel;
  const std::string name = unique_op("Unresolved");
  const std::string target = unique("unresolved_target");
  auto asked = std::make_shared<std::atomic<int>>(0);
  register_detector(target, [asked](const Device& d) {
    (*asked)++;
    return d == Device::cuda(14);
  });
  register_kernel_builder(name, target, logging_builder(std::make_shared<BuilderLog>()));
  ToyOp op(with_selection_table(toy_class(name)));
  EXPECT_EQ(asked->load(), 0);
  op(on_cuda({4}, 14));
  EXPECT_EQ(asked->load(), 1);
  op(on_cuda({4}, 14));
  EXPECT_EQ(asked->load(), 1);
}

TEST(InstanceStateTable3, Row2_ServingTargetStartsNone) {
  ToyOp op(with_selection_table(toy_class(unique_op("Serving"))));
  EXPECT_EQ(op.serving_target(), std::nullopt);
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);
}

TEST(InstanceStateTable3, Row3_EntriesByCallStartsEmpty) {
  ToyOp op(with_selection_table(toy_class(unique_op("ByCall"))));
  const int entry_fors = counters().entry_for.load();
  op.kernel_for<Scaling>(scaling(5));  // a miss: consults the implementation
  EXPECT_EQ(counters().entry_for.load(), entry_fors + 1);
  op.kernel_for<Scaling>(scaling(5));  // a hit
  EXPECT_EQ(counters().entry_for.load(), entry_fors + 1);
}

TEST(InstanceStateTable3, Row4_BuiltEntriesStartsEmpty) {
  ToyOp op(with_selection_table(toy_class(unique_op("Built"))));
  EXPECT_TRUE(op.built_entries("scale").empty());
  EXPECT_THAT(error_of<OpNotAvailableError>([&] { op.built_entries("nonesuch"); }),
              StartsWith(op.name() + " has no in-tree implementation for 'nonesuch'"));
}

TEST(InstanceStateTable3, Row5_TargetKernelsStartsEmpty) {
  const std::string name = unique_op("TargetKernels");
  const std::string target = unique("tk_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  EXPECT_TRUE(op.built_entries("scale").empty());
  op(cpu({4}));
  EXPECT_EQ(log->build_count(), 1);
  EXPECT_EQ(op.built_entries("scale").size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Table 4: what adding an op, a composite, a target, a kernel or a state field guarantees.

TEST(InstanceStateTable4, Row1_OpWithABoundaryGetsChecksSelectionRecordAndUndo) {
  // An op with a call-time input and no composition: it has effect-branch operators, and
  // run_call does the checks, selection, recording and failure handling.
  ToyOp op(with_selection_table(toy_class("ToyBoundaryFwdOp")), {}, std::nullopt,
           fail_after_compute);
  EXPECT_EQ(op.effect_branch(Inputs{cpu({4}), std::nullopt}, false).operator_name,
            "tileops::toy_boundary_fwd");
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}, DType::kInt8)); }),
            "ToyBoundaryFwdOp: x dtype is outside [float16, float32]; got int8");
  EXPECT_THROW(op(cpu({4})), std::runtime_error);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  op.set_body({});
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);
  EXPECT_EQ(op.last_call()->index("N").as_int(), 4);
}

TEST(InstanceStateTable4, Row2_OpWithoutABoundaryGetsTheSame) {
  // A composite has no compile boundary; run_call still checks, selects, records and undoes.
  ToyOp op(composite_class(unique_op("NoBoundary")), {}, std::nullopt, fail_after_compute);
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}, DType::kInt8)); }),
            op.name() + ": x dtype is outside [float16, float32]; got int8");
  EXPECT_THROW(op(cpu({4})), std::runtime_error);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  op.set_body([](ToyOp& self, const CallArgs& a) { return through(self, a, {"first"}); });
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);
  EXPECT_EQ(op.last_call()->stages()[0].second.size(), 1u);
}

TEST(InstanceStateTable4, Row3_CompositeFilesEverySubCallOrRaises) {
  auto stray = std::make_shared<ToySubOp>(ParamMap{}, std::nullopt);
  ToyOp op(composite_class(unique_op("Files")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) {
             return through(self, a, {"first", "second"});
           });
  op(cpu({4}));
  for (const auto& [stage, calls] : op.last_call()->stages()) EXPECT_EQ(calls.size(), 1u) << stage;
  op.set_body([stray](ToyOp& self, const CallArgs& a) {
    (*stray)(a.input(0));
    return through(self, a, {"first"});
  });
  EXPECT_THROW(op(cpu({4})), RuntimeStateError);
}

TEST(InstanceStateTable4, Row4_TargetGetsTheSameChecksRecordAndFailureHandling) {
  const std::string name = unique_op("SameChecks");
  const std::string target = unique("same_checks");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target,
                          [log](std::span<const std::optional<TensorSpec>> in, const ParamMap& p) {
                            TargetKernel k = logging_builder(log)(in, p);
                            k.run = [](const TargetCall& c) -> CallResult {
                              if (c.inputs[0]->shape()[0] == 3)
                                return {cpu({2})};  // a wrong result
                              return {Tensor::empty(c.inputs[0]->shape(), c.inputs[0]->dtype())};
                            };
                            return k;
                          });
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  // Checked before the builder is reached.
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}), cpu({5})); }),
            name + ": w shape does not match N: axis 0 is 5, expected 4");
  EXPECT_EQ(log->build_count(), 0);
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({3})); }),
            name + ": output y has shape [2], expected [3]");
  EXPECT_EQ(op.serving_target(), std::nullopt);  // undone
  op(cpu({4}));
  EXPECT_EQ(op.last_call()->index("N").as_int(), 4);
  EXPECT_EQ(op.forward_calls(), 0);
}

TEST(InstanceStateTable4, Row5_KernelImplementationLeavesTheOpUnchanged) {
  const std::string name = unique_op("AddsKernel");
  OpClass& cls = toy_class(name).interface<Scaling>("scale").kernel<GeneralKernel>("general");
  register_kernel_type(name, KernelType::of<PositiveKernel>("positive_only"));
  ToyOp op(cls);  // the op class is unchanged; its forward finds the new kernel through kernel_for
  op(cpu({20}));
  op(cpu({25}));
  op(cpu({35}));
  EXPECT_EQ(op.ran(), "positive");
  auto built = op.built_entries("scale");
  ASSERT_EQ(built.size(), 2u);  // by (implementation, identity): 20 and 25 share one
  EXPECT_EQ(built[0].key, "positive_only");
}

TEST(InstanceStateTable4, Row6_StateFieldsExistAfterConstructionAndNothingRemainsAfterUndo) {
  // A composite with a kernel interface of its own whose failing call has first built real state:
  // its two sub-ops' calls select and build an entry each, and it builds one of its own.
  std::size_t kernels_at_failure = 0;
  ToyOp op(with_selection_table(composite_class(unique_op("Fields"))), {}, std::nullopt,
           [&](ToyOp& self, const CallArgs& args) -> CallResult {
             through(self, args, {"first", "second"});
             self.compute(args);
             kernels_at_failure = self.iter_kernels().size();
             throw std::runtime_error("forward failed");
           });
  // Every accessor works on a fresh instance.
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_TRUE(op.held_delegates().empty());
  EXPECT_TRUE(op.iter_kernels().empty());
  EXPECT_TRUE(op.built_entries("scale").empty());
  EXPECT_THROW(op.last_call(), RuntimeStateError);
  EXPECT_THROW(op.eval_roofline(), RuntimeStateError);
  EXPECT_EQ(op.effect_branch(Inputs{cpu({4}), cpu({4})}, true).has_out, true);
  EXPECT_THROW(op(cpu({4})), std::runtime_error);
  ASSERT_EQ(kernels_at_failure, 3u);  // the op's entry and one per sub-op
  // The selection is undone: nothing of the binding group remains, in the op or its sub-ops.
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_TRUE(op.iter_kernels().empty());
  EXPECT_TRUE(op.built_entries("scale").empty());
  const auto held = op.held_delegates();  // the running group keeps the held sub-ops
  ASSERT_EQ(held.size(), 2u);
  for (const auto& sub : held) {
    EXPECT_EQ(sub->serving_target(), std::nullopt);
    EXPECT_TRUE(sub->built_entries("scale").empty());
  }
  EXPECT_THROW(op.last_call(), RuntimeStateError);
}

// ---------------------------------------------------------------------------------------------
// Composite-ops Table 1: when sub-ops are built.

// Holds both stages in its constructor, after Op's constructor has run.
class EagerComposite : public ToyOp {
 public:
  explicit EagerComposite(const OpClass& cls) : ToyOp(cls) {
    first_ = &hold<ToySubOp>("first", Identity());
    second_ = &hold<ToySubOp>("second", Identity());
    set_body([this](ToyOp& self, const CallArgs& a) -> CallResult {
      (*first_)(a.input(0));
      (*second_)(a.input(0));
      return {self.output(a, 0)};
    });
  }

 private:
  ToySubOp* first_;
  ToySubOp* second_;
};

TEST(CompositeTable1, Row1_SettledAtConstruction_HeldBeforeAnyCall) {
  EagerComposite op(composite_class(unique_op("Eager")));
  auto held = op.held_delegates();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0]->op_class().name(), "ToySubFwdOp");
  op(cpu({4}));
  EXPECT_EQ(op.held_delegates(), held);
  EXPECT_EQ(op.last_call()->stages()[0].second.size(), 1u);
  EXPECT_EQ(op.last_call()->stages()[1].second.size(), 1u);
}

TEST(CompositeTable1, Row2_KnownOnlyAtCallTime_HeldInForwardOncePerIdentity) {
  // One sub-op per call-time identity (here the call's N), as FusedMoEExpertsFwdOp holds one
  // pre_permute per expert count.
  ToyOp op(composite_class(unique_op("Lazy")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) -> CallResult {
             const std::int64_t n = a.call.index("N").as_int();
             self.hold<ToySubOp>("first", Identity(n))(a.input(0));
             return {self.output(a, 0)};
           });
  EXPECT_TRUE(op.held_delegates().empty());
  op(cpu({4}));
  op(cpu({4}));
  EXPECT_EQ(op.held_delegates().size(), 1u);
  op(cpu({8}));
  EXPECT_EQ(op.held_delegates().size(), 2u);
  EXPECT_EQ(op.last_call()->stages()[0].second.at(0)->index("N").as_int(), 8);
}

}  // namespace
}  // namespace tileops::optest
