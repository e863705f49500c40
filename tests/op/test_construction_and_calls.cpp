// The seeds' construction-and-calls Tables 1-6 (docs/seeds.md), one test per row.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

CallResult fail_after_compute(ToyOp& self, const CallArgs& args) {
  self.compute(args);
  throw std::runtime_error("forward failed");
}

// ---------------------------------------------------------------------------------------------
// Table 1: the steps of Op's constructor.

TEST(ConstructionTable1, Row1_LoadsTheBackendRegistry) {
  // The suite's environment names a backend in TILEOPS_BACKENDS (test_backend_plugin.cpp);
  // constructing any op loads it, before any call.
  ToyOp op(toy_class(unique_op("Load")));
  const std::vector<std::string> targets = registered_targets();
  EXPECT_NE(std::find(targets.begin(), targets.end(), "env_plugin_target"), targets.end());
  EXPECT_THROW(op.last_call(), RuntimeStateError);  // nothing was called
}

TEST(ConstructionTable1, Row2_ChecksParamsAndKeepsConstructionIndices) {
  OpClass& cls = toy_class(unique_op("Params"));
  EXPECT_EQ(error_of<CheckError>([&] {
              ToyOp bad(cls, {{"factor", Value(0)}});
            }),
            cls.name() + ": shape_rules[0]: factor > 0");
  EXPECT_EQ(error_of<CheckError>([&] {
              ToyOp bad(cls, {{"bogus", Value(1)}});
            }),
            cls.name() + ": unknown param 'bogus'");
  ToyOp op(cls, {{"factor", Value(3)}});
  // The solved values are kept: defaults filled in, given values as given.
  EXPECT_EQ(op.params().at("factor").as_int(), 3);
  EXPECT_TRUE(op.params().at("eps").is_none());
  op(cpu({4}));
  EXPECT_EQ(op.param("factor").as_int(), 3);
}

TEST(ConstructionTable1, Row3_InstallsTheTableChecksContractsAndBuildsEmptyEntryCaches) {
  FakeAccelerator accel;
  OpClass& bad = toy_class(unique_op("TwoGenerals"))
                     .interface<Scaling>("scale")
                     .kernel<GeneralKernel>("general")
                     .kernel<SecondGeneralKernel>("second_general");
  EXPECT_EQ(error_of<ContractError>([&] { ToyOp op(bad); }),
            bad.name() + ": interface 'scale' has more than one general implementation");
  OpClass& cls = with_selection_table(toy_class(unique_op("Installs")));
  ToyOp op(cls);
  EXPECT_TRUE(op.built_entries("scale").empty());
  // Installing resolves classes only: no device property was read, no device made current.
  EXPECT_EQ(accel.fact_reads(), 0);
  EXPECT_EQ(accel.sets(), 0);
  EXPECT_EQ(op.key_for("scale", scaling(5)), "positive");
}

TEST(ConstructionTable1, Row4_RegistersTheInstanceUnderAKey) {
  const std::string name = unique_op("Keyed");
  OpClass& cls = toy_class(name);
  auto a = std::make_shared<ToyOp>(cls);
  auto b = std::make_shared<ToyOp>(cls);
  EXPECT_EQ(a->instance_key(), name + "#0");
  EXPECT_EQ(b->instance_key(), name + "#1");
  EXPECT_EQ(find_instance(a->instance_key()), a);
  EXPECT_EQ(find_instance(b->instance_key()), b);
  // An instance no std::shared_ptr owns is registered but not handed out (Note [Owned instances]).
  ToyOp on_stack(cls);
  EXPECT_EQ(on_stack.instance_key(), name + "#2");
  EXPECT_EQ(find_instance(on_stack.instance_key()), nullptr);
}

// The handle find_instance returns owns the instance: releasing every other owner leaves it alive
// until the handle goes, and then its key no longer resolves.
TEST(ConstructionTable1, Row4_TheFoundInstanceStaysAliveWhileHeld) {
  OpClass& cls = toy_class(unique_op("Held"));
  auto op = std::make_shared<ToyOp>(cls);
  const std::string key = op->instance_key();
  std::weak_ptr<ToyOp> watch = op;
  std::shared_ptr<Op> held = find_instance(key);
  op.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(held->instance_key(), key);
  held.reset();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(find_instance(key), nullptr);
}

// Lookups racing the owner's release (TSan and ASan check this test): each lookup either finds
// nothing or gets an instance that stays alive while it is used.
TEST(ConstructionTable1, Row4_LookupsRaceTheOwnersRelease) {
  OpClass& cls = toy_class(unique_op("Raced"));
  for (int round = 0; round < 50; ++round) {
    auto op = std::make_shared<ToyOp>(cls);
    const std::string key = op->instance_key();
    std::atomic<bool> released{false};
    std::thread looker([&] {
      while (!released.load()) {
        if (std::shared_ptr<Op> found = find_instance(key)) {
          EXPECT_EQ(found->instance_key(), key);
        }
      }
    });
    op.reset();
    released.store(true);
    looker.join();
    EXPECT_EQ(find_instance(key), nullptr);
  }
}

TEST(ConstructionTable1, Row5_BuildsTheBindingAndRunningStateEmpty) {
  ToyOp op(composite_class(unique_op("Empty")));
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_TRUE(op.held_delegates().empty());
  EXPECT_TRUE(op.iter_kernels().empty());
  EXPECT_FALSE(op.tune_requested());
  EXPECT_THROW(op.last_call(), RuntimeStateError);
  ASSERT_EQ(op.op_class().stages().size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Table 2: call entry points. In C++ both the typed operator() of a class and the generic call()
// reach run_call; a meta-tensor call is the generated fake of the Python compile boundary.

TEST(ConstructionTable2, Row1_TypedCallReachesRunCall) {
  ToyOp op(with_selection_table(toy_class(unique_op("Typed"))));
  Tensor y = op(cpu({4}));
  EXPECT_EQ(y.shape(), (Shape{4}));
  EXPECT_EQ(op.forward_calls(), 1);
  EXPECT_EQ(op.last_call()->index("N").as_int(), 4);
  EXPECT_EQ(op.ran(), "positive");
  // The same checks: a bad typed call raises the signature's CheckError and runs nothing.
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}), cpu({5})); }),
            op.name() + ": w shape does not match N: axis 0 is 5, expected 4");
  EXPECT_EQ(op.forward_calls(), 1);
}

TEST(ConstructionTable2, Row2_GenericCallReachesRunCall) {
  ToyOp op(with_selection_table(toy_class(unique_op("Generic"))));
  const Inputs inputs{cpu({30}), cpu({30})};
  CallResult r = op.call(inputs);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->shape(), (Shape{30}));
  EXPECT_EQ(op.forward_calls(), 1);
  EXPECT_EQ(op.ran(), "band");
  EXPECT_TRUE(op.last_call()->present("w"));
  EXPECT_EQ(error_of<CheckError>([&] { op.call(Inputs{cpu({30})}); }),
            op.name() + ": takes 2 inputs, got 1");
}

TEST(ConstructionTable2, Row3_MetaCallChecksRecordsAndBuildsNothing) {
  const std::string name = unique_op("Meta");
  const std::string target = unique("meta_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  CallResult r = op.call(Inputs{meta({6}, DType::kFloat32), std::nullopt});
  ASSERT_TRUE(r[0]);
  EXPECT_TRUE(r[0]->is_meta());
  EXPECT_EQ(r[0]->shape(), (Shape{6}));
  EXPECT_EQ(r[0]->dtype(), DType::kFloat32);
  EXPECT_EQ(op.last_call()->index("N").as_int(), 6);
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_EQ(log->build_count(), 0);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  // The check runs on meta tensors too.
  EXPECT_EQ(error_of<CheckError>([&] {
              op.call(Inputs{meta({6}), meta({5})});
            }),
            name + ": w shape does not match N: axis 0 is 5, expected 6");
}

TEST(ConstructionTable2, Row4_OpWithoutBoundaryRunsTheServingTargetsKernelElseForward) {
  // C++ has no tracing; what remains of row 4 is the choice inside run_call for an op without a
  // compile boundary (a composite): the target's kernel when a target serves it, else forward.
  const std::string name = unique_op("NoBoundary");
  const std::string target = unique("nb_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp served(composite_class(name), {}, Target::named(target),
               [](ToyOp& self, const CallArgs& a) { return through(self, a, {"first"}); });
  served(cpu({4}));
  EXPECT_EQ(log->run_count(), 1);
  EXPECT_EQ(served.forward_calls(), 0);
  ToyOp composed(composite_class(unique_op("NoBoundary")), {}, std::nullopt,
                 [](ToyOp& self, const CallArgs& a) { return through(self, a, {"first"}); });
  composed(cpu({4}));
  EXPECT_EQ(composed.forward_calls(), 1);
}

// ---------------------------------------------------------------------------------------------
// Table 3: the seven steps of a call.

TEST(ConstructionTable3, Step1_BeginsTheCallAndCollectsSubOpCalls) {
  ToyOp op(composite_class(unique_op("Begin")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) {
             return through(self, a, {"first", "first", "second"});
           });
  op(cpu({4}));
  const auto& stages = op.last_call()->stages();
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].second.size(), 2u);
  EXPECT_EQ(stages[1].second.size(), 1u);
}

TEST(ConstructionTable3, Step2_ChecksTheSignatureAndProducesTheRecord) {
  ToyOp op(with_selection_table(toy_class(unique_op("Check"))));
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}, DType::kInt32)); }),
            op.name() + ": x dtype is outside [float16, float32]; got int32");
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_EQ(op.serving_target(), std::nullopt);  // a call that fails its check selects nothing
  op(cpu({7}, DType::kFloat32));
  auto rec = op.last_call();
  EXPECT_EQ(rec->index("N").as_int(), 7);
  EXPECT_EQ(rec->index("T").as_dtype(), DType::kFloat32);
  EXPECT_EQ(rec->device(), Device::cpu());
}

TEST(ConstructionTable3, Step3_DetectsAnEmptyWrite) {
  ToyOp op(with_selection_table(toy_class(unique_op("EmptyWrite"))));
  Tensor y = op(cpu({0}));
  EXPECT_EQ(y.shape(), (Shape{0}));
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(op.last_call()->index("N").as_int(), 0);
}

TEST(ConstructionTable3, Step4_SelectsTheTargetOnceAtTheFirstCallThatRuns) {
  const std::string name = unique_op("Select");
  const std::string target = unique("select_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  EXPECT_EQ(op.serving_target(), std::nullopt);
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), Target::named(target));
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), Target::named(target));
  ToyOp builtin(with_selection_table(toy_class(unique_op("Select"))));
  builtin(cpu({4}));
  EXPECT_EQ(builtin.serving_target(), kBuiltin);
}

TEST(ConstructionTable3, Step5_RunsTheTargetKernelOrTheBody) {
  const std::string name = unique_op("Run");
  const std::string target = unique("run_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  OpClass& cls = with_selection_table(toy_class(name));
  ToyOp served(cls, {}, Target::named(target));
  served(cpu({4}));
  EXPECT_EQ(log->run_count(), 1);
  EXPECT_EQ(served.forward_calls(), 0);
  ToyOp builtin(cls, {}, kBuiltin);
  builtin(cpu({4}));
  EXPECT_EQ(builtin.forward_calls(), 1);
  EXPECT_EQ(log->run_count(), 1);
}

TEST(ConstructionTable3, Step6_ChecksTheResult) {
  ToyOp op(toy_class(unique_op("Result")), {}, std::nullopt,
           [](ToyOp&, const CallArgs&) -> CallResult { return {cpu({3})}; });
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4})); }),
            op.name() + ": output y has shape [3], expected [4]");
  EXPECT_THROW(op.last_call(), RuntimeStateError);
}

TEST(ConstructionTable3, Step7_RecordsFilesStagesKeepsAndReportsToTheParent) {
  ToyOp op(composite_class(unique_op("Record")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) { return through(self, a, {"second"}); });
  op(cpu({4}));
  auto rec = op.last_call();
  const auto& stages = rec->stages();
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].first, "first");
  EXPECT_TRUE(stages[0].second.empty());
  EXPECT_EQ(stages[1].first, "second");
  ASSERT_EQ(stages[1].second.size(), 1u);
  // The sub-op reported exactly the record it kept as its own last_call.
  EXPECT_EQ(stages[1].second[0], op.held_delegates().at(0)->last_call());
}

// Note [Lazy publication] in src/op/op_call.cpp: a call's record is shared only when last_call()
// or eval_roofline() asks for it. What they answer must be the newest completed call's, and a
// record handed out must stay as it was whatever calls follow.
TEST(ConstructionTable3, Step7_LastCallIsTheNewestCallsRecordAndAHeldOneNeverChanges) {
  ToyOp op(with_selection_table(toy_class(unique_op("Lazy"))));
  op(cpu({2}));
  const auto first = op.last_call();
  EXPECT_EQ(first, op.last_call());  // asked twice, shared once
  op(cpu({3}));
  op(cpu({4}));  // never asked for: its record goes back to the pool when the next call ends
  op(cpu({5}));
  EXPECT_EQ(op.eval_roofline().flops, op.last_call()->index("N").as_int());
  const auto fifth = op.last_call();
  EXPECT_EQ(fifth->index("N").as_int(), 5);
  for (std::int64_t n = 6; n < 40; ++n) op(cpu({n}));
  EXPECT_EQ(op.last_call()->index("N").as_int(), 39);
  EXPECT_EQ(first->index("N").as_int(), 2);
  EXPECT_EQ(first->tensors()[0].shape, Shape{2});
  EXPECT_EQ(fifth->index("N").as_int(), 5);
  EXPECT_NE(first, fifth);
}

// ---------------------------------------------------------------------------------------------
// Table 4: the two ways a backend joins.

TEST(ConstructionTable4, Row1_TargetIsSelectedAtTheFirstCallAndUnchangedAfter) {
  FakeAccelerator accel;
  DefaultTargetGuard restore;
  const std::string name = unique_op("Joins");
  const std::string first = unique("join_first");
  const std::string later = unique("join_later");
  auto log = std::make_shared<BuilderLog>();
  register_detector(first, [](const Device& d) { return d == Device::cuda(11); });
  register_kernel_builder(name, first, logging_builder(log));
  register_kernel_builder(name, later, logging_builder(std::make_shared<BuilderLog>()));
  ToyOp op(with_selection_table(toy_class(name)));
  op(on_cuda({4}, 11));
  EXPECT_EQ(op.serving_target(), Target::named(first));
  set_default_target(Target::named(later));  // does not change a selection already made
  op(on_cuda({4}, 11));
  EXPECT_EQ(op.serving_target(), Target::named(first));
  EXPECT_EQ(log->run_count(), 2);
}

TEST(ConstructionTable4, Row2_RegisteredKernelTypeIsMergedAtConstruction) {
  const std::string name = unique_op("Merged");
  OpClass& cls = toy_class(name).interface<Scaling>("scale").kernel<GeneralKernel>("general");
  ToyOp before(cls);
  register_kernel_type(name, KernelType::of<PositiveKernel>("positive"));
  ToyOp after(cls);
  EXPECT_EQ(before.key_for("scale", scaling(5)), "general");
  EXPECT_EQ(after.key_for("scale", scaling(5)), "positive");  // by its own declarations
  EXPECT_EQ(after.key_for("scale", scaling(0)), "general");
}

// ---------------------------------------------------------------------------------------------
// Table 5: kernel type and entry.

OpClass& bucket_class(const std::string& name) {
  return toy_class(name).interface<Scaling>("scale").kernel<AnyDeviceKernel>("any_device");
}

TEST(ConstructionTable5, Row1_KernelTypeIsTheClassEntryIsAnObjectBuiltForACall) {
  KernelType type = KernelType::of<BandKernel>("band");
  EXPECT_EQ(type.key, "band");
  EXPECT_EQ(type.class_name, "BandKernel");
  EXPECT_EQ(type.interface_type, std::type_index(typeid(Scaling)));
  ToyOp op(bucket_class(unique_op("Example")));
  auto entry = op.kernel_for<Scaling>(scaling(42));
  EXPECT_EQ(std::dynamic_pointer_cast<FakeEntry>(entry)->call.n, 42);
}

TEST(ConstructionTable5, Row2_EntryIsBuiltWhenTheFirstCallThatNeedsItArrives) {
  ToyOp op(bucket_class(unique_op("Lazy")));
  const int builds = counters().builds.load();
  EXPECT_TRUE(op.built_entries("scale").empty());
  op(cpu({4}));
  EXPECT_EQ(counters().builds.load(), builds + 1);
  EXPECT_EQ(op.built_entries("scale").size(), 1u);
}

TEST(ConstructionTable5, Row3_TypeCarriesDeclarationsEntryCarriesItsConstructionArguments) {
  KernelType type = KernelType::of<Sm90Kernel>("sm90");
  EXPECT_EQ(type.devices, std::vector<DeviceType>{DeviceType::kCUDA});
  EXPECT_EQ(type.supported_archs, std::vector<int>{90});
  KernelType band = KernelType::of<BandKernel>("band");
  EXPECT_EQ(band.preferred_over, std::vector<std::string>{"positive"});
  ScalingCall five = scaling(5);
  EXPECT_EQ(band.refusal(&five), "serves 10 < n <= 50");
  ScalingCall twenty = scaling(20);
  EXPECT_EQ(band.refusal(&twenty), std::nullopt);
  EXPECT_EQ(band.entry_for(&twenty).identity, Identity(Bucket{Device::cpu(), 2}));
  ToyOp op(bucket_class(unique_op("Carries")));
  auto entry = std::dynamic_pointer_cast<FakeEntry>(op.kernel_for<Scaling>(scaling(23)));
  EXPECT_EQ(entry->call, scaling(23));
}

TEST(ConstructionTable5, Row4_OneEntryPerTypeAndIdentity) {
  ToyOp op(bucket_class(unique_op("PerIdentity")));
  auto a = op.kernel_for<Scaling>(scaling(1));
  auto b = op.kernel_for<Scaling>(scaling(9));
  auto c = op.kernel_for<Scaling>(scaling(10));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto built = op.built_entries("scale");
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[0].identity, Identity(Bucket{Device::cpu(), 0}));
  EXPECT_EQ(built[1].identity, Identity(Bucket{Device::cpu(), 1}));
}

TEST(ConstructionTable5, Row5_TypesAreKeptInTheTableEntriesInBuiltEntries) {
  OpClass& cls = with_selection_table(toy_class(unique_op("Kept")));
  ASSERT_EQ(cls.kernel_types().size(), 5u);
  EXPECT_EQ(cls.kernel_types()[2].key, "band");
  ToyOp op(cls);
  op(cpu({20}));
  op(cpu({200}));
  auto built = op.built_entries("scale");
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[0].key, "band");
  EXPECT_EQ(built[1].key, "hundreds");
}

TEST(ConstructionTable5, Row6_TheSubclassCallsTheEntry) {
  ToyOp op(with_selection_table(toy_class(unique_op("Calls"))));
  auto entry = op.kernel_for<Scaling>(scaling(-3));
  EXPECT_EQ(entry->key(), "negative");
  // Obtained again through kernel_for, it is the same object (one lookup, nothing rebuilt).
  EXPECT_EQ(op.kernel_for<Scaling>(scaling(-3)), entry);
}

// ---------------------------------------------------------------------------------------------
// Table 6: instance state after a failure.

TEST(ConstructionTable6, Row1_TargetSelectedInThisCall_UndoneKernelsDroppedLastCallUnchanged) {
  ToyOp op(with_selection_table(toy_class(unique_op("Undo"))), {}, std::nullopt,
           fail_after_compute);
  op.call(Inputs{meta({4}), std::nullopt});  // a record that selected nothing
  auto before = op.last_call();
  EXPECT_THROW(op(cpu({4})), std::runtime_error);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_TRUE(op.built_entries("scale").empty());
  EXPECT_EQ(op.last_call(), before);
  // The next call selects again.
  op.set_body({});
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);

  // The same under a target: the kernels its builder built are dropped.
  const std::string name = unique_op("UndoTarget");
  const std::string target = unique("undo_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(
      name, target, [log](std::span<const std::optional<TensorSpec>> in, const ParamMap& p) {
        TargetKernel k = logging_builder(log)(in, p);
        k.run = [](const TargetCall&) -> CallResult { throw std::runtime_error("kernel failed"); };
        return k;
      });
  ToyOp served(with_selection_table(toy_class(name)), {}, Target::named(target));
  EXPECT_THROW(served(cpu({4})), std::runtime_error);
  EXPECT_EQ(served.serving_target(), std::nullopt);
  EXPECT_TRUE(served.built_entries("scale").empty());
  EXPECT_THROW(served(cpu({4})), std::runtime_error);
  EXPECT_EQ(log->build_count(), 2);  // built again after the undo
}

TEST(ConstructionTable6, Row1_UndoTravelsDownThroughTheHeldSubOps) {
  ToyOp op(composite_class(unique_op("UndoDown")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) -> CallResult {
             through(self, a, {"first"});
             throw std::runtime_error("composite failed after its sub-op ran");
           });
  EXPECT_THROW(op(cpu({4})), std::runtime_error);
  ASSERT_EQ(op.held_delegates().size(), 1u);  // still held
  std::shared_ptr<Op> sub = op.held_delegates()[0];
  EXPECT_EQ(sub->serving_target(), std::nullopt);
  EXPECT_TRUE(sub->built_entries("scale").empty());
  EXPECT_EQ(sub->last_call()->index("N").as_int(), 4);  // its completed call stays recorded
  EXPECT_EQ(op.serving_target(), std::nullopt);
}

TEST(ConstructionTable6, Row2_TargetSelectedEarlier_KeptKernelsKeptLastCallUnchanged) {
  ToyOp op(with_selection_table(toy_class(unique_op("Keep"))));
  op(cpu({4}));
  auto before = op.last_call();
  op.set_body(fail_after_compute);
  EXPECT_THROW(op(cpu({20})), std::runtime_error);
  EXPECT_EQ(op.serving_target(), kBuiltin);
  auto built = op.built_entries("scale");
  ASSERT_EQ(built.size(), 2u);  // the failing call's entry is kept too
  EXPECT_EQ(built[1].key, "band");
  EXPECT_EQ(op.last_call(), before);
}

}  // namespace
}  // namespace tileops::optest
