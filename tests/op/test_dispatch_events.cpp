// Dispatch events (Note [Dispatch events] in tileops/op/dispatch.hpp) and Op::explain_call, with
// the fake family of toy_ops.hpp: what each selection reports to the sinks, when it reports
// nothing, the text TILEOPS_LOG=dispatch prints, and explanations that build nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tileops/op/dispatch.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Collects every event it hears (the sinks are process-wide: tests read only their own op's).
class Recorder {
 public:
  Recorder() : sink_([this](const DispatchEvent& e) { events_.push_back(e); }) {}
  // The events of instance `instance`.
  std::vector<DispatchEvent> of(const Op& op) const {
    std::vector<DispatchEvent> out;
    for (const DispatchEvent& e : events_)
      if (e.instance == op.instance_key()) out.push_back(e);
    return out;
  }

 private:
  std::vector<DispatchEvent> events_;  // calls to one sink are serialised
  ScopedDispatchSink sink_;
};

// "key=kind[:reason]" per verdict, for compact expectations.
std::vector<std::string> verdicts_of(const DispatchEvent& e) {
  std::vector<std::string> out;
  for (const ImplementationVerdict& v : e.verdicts)
    out.push_back(v.key + "=" + std::string(verdict_kind_name(v.kind)) +
                  (v.reason.empty() ? "" : ": " + v.reason));
  return out;
}

TEST(DispatchEvents, AMissReportsEveryVerdictAndTheWinner) {
  Recorder recorder;
  const std::string name = unique_op("Events");
  ToyOp op(with_selection_table(toy_class(name)));
  op(cpu({20}));
  std::vector<DispatchEvent> events = recorder.of(op);
  ASSERT_EQ(events.size(), 1u);
  const DispatchEvent& e = events[0];
  EXPECT_EQ(e.op, name);
  EXPECT_EQ(e.instance, op.instance_key());
  EXPECT_EQ(e.interface, "scale");
  EXPECT_EQ(e.call, "ScalingCall(n=20, device=cpu)");
  EXPECT_EQ(e.device, Device::cpu());
  EXPECT_EQ(e.facts, DeviceFacts{});
  EXPECT_EQ(e.forced, "");
  // general and positive serve but rank below band (general is general, band is preferred over
  // positive).
  EXPECT_THAT(verdicts_of(e),
              ElementsAre("general=serves", "positive=serves", "band=serves",
                          "hundreds=refuses: serves n > 100", "negative=refuses: serves n < 0"));
  EXPECT_EQ(e.verdicts[3].class_name, "HundredsKernel");
  EXPECT_EQ(e.outcome, DispatchOutcome::kSelected);
  EXPECT_EQ(e.winner, "band");
  EXPECT_TRUE(e.ambiguous.empty());
}

TEST(DispatchEvents, ACacheHitReportsNothing) {
  Recorder recorder;
  ToyOp op(with_selection_table(toy_class(unique_op("Hit"))));
  op(cpu({20}));
  op(cpu({20}));
  op.kernel_for<Scaling>(scaling(20));
  EXPECT_EQ(recorder.of(op).size(), 1u);
  op(cpu({21}));  // another call spec: a miss, though it shares the built entry (n / 10)
  EXPECT_EQ(recorder.of(op).size(), 2u);
}

TEST(DispatchEvents, UnavailableDeviceAndArchitecture) {
  FakeAccelerator accel(80);
  Recorder recorder;
  ToyOp op(toy_class(unique_op("Arch"))
               .interface<Scaling>("scale")
               .kernel<GeneralKernel>("general")
               .kernel<Sm90Kernel>("sm90"));
  EXPECT_THROW(op(on_cuda({4}, 0)), SelectionError);
  accel.set_arch(90);
  op(on_cuda({4}, 0));
  std::vector<DispatchEvent> events = recorder.of(op);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].device, Device::cuda(0));
  EXPECT_EQ(events[0].facts.arch, 80);
  EXPECT_EQ(events[0].facts.sm_count, 132);
  EXPECT_THAT(
      verdicts_of(events[0]),
      ElementsAre("general=wrong device: runs on [cpu], not cuda",
                  "sm90=wrong architecture: built for architectures [90], device reports 80"));
  EXPECT_EQ(events[0].verdicts[0].kind, VerdictKind::kWrongDevice);
  EXPECT_EQ(events[0].verdicts[1].kind, VerdictKind::kWrongArch);
  EXPECT_EQ(events[0].outcome, DispatchOutcome::kNothingServes);
  EXPECT_EQ(events[0].winner, "");
  EXPECT_EQ(events[1].facts.arch, 90);
  EXPECT_EQ(events[1].outcome, DispatchOutcome::kSelected);
  EXPECT_EQ(events[1].winner, "sm90");

  // No key lists the device type: the event says so before the OpNotAvailableError.
  ToyOp elsewhere(
      toy_class(unique_op("Elsewhere")).interface<Scaling>("scale").kernel<Sm90Kernel>("sm90"));
  EXPECT_THROW(elsewhere(cpu({4})), OpNotAvailableError);
  ASSERT_EQ(recorder.of(elsewhere).size(), 1u);
  EXPECT_EQ(recorder.of(elsewhere)[0].outcome, DispatchOutcome::kNotOnDevice);
}

TEST(DispatchEvents, AmbiguousSelection) {
  Recorder recorder;
  ToyOp op(with_selection_table(toy_class(unique_op("Tie"))).kernel<OverlapKernel>("overlap"));
  EXPECT_THROW(op.key_for("scale", scaling(5)), SelectionError);
  std::vector<DispatchEvent> events = recorder.of(op);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].outcome, DispatchOutcome::kAmbiguous);
  EXPECT_THAT(events[0].ambiguous, ElementsAre("positive", "overlap"));
  EXPECT_EQ(events[0].winner, "");
  EXPECT_EQ(outcome_text(events[0]), "nothing (ambiguous: positive, overlap)");
}

TEST(DispatchEvents, ForcedImplementation) {
  Recorder recorder;
  ToyOp op(with_selection_table(toy_class(unique_op("Forced"))));
  {
    EnvGuard force("TILEOPS_FORCE", "general");
    EXPECT_EQ(op.key_for("scale", scaling(20)), "general");
  }
  {
    EnvGuard force("TILEOPS_FORCE", "band");
    EXPECT_THROW(op.key_for("scale", scaling(5)), SelectionError);
  }
  {
    EnvGuard force("TILEOPS_FORCE", "no_such_key");  // names no key here: not forced
    EXPECT_EQ(op.key_for("scale", scaling(5)), "positive");
  }
  std::vector<DispatchEvent> events = recorder.of(op);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].forced, "general");
  EXPECT_THAT(verdicts_of(events[0]),
              ElementsAre("general=serves", "positive=forced away", "band=forced away",
                          "hundreds=refuses: serves n > 100", "negative=refuses: serves n < 0"));
  EXPECT_EQ(events[0].winner, "general");
  EXPECT_EQ(events[1].forced, "band");
  EXPECT_EQ(events[1].outcome, DispatchOutcome::kForcedKeyRefuses);
  EXPECT_THAT(verdicts_of(events[1]),
              ElementsAre("general=forced away", "positive=forced away",
                          "band=refuses: serves 10 < n <= 50", "hundreds=refuses: serves n > 100",
                          "negative=refuses: serves n < 0"));
  EXPECT_EQ(events[2].forced, "");
  EXPECT_EQ(events[2].winner, "positive");
}

TEST(DispatchEvents, SinksAddRemoveAndSeveralAtOnce) {
  ToyOp op(with_selection_table(toy_class(unique_op("Sinks"))));
  std::vector<std::string> first, second;
  const DispatchSinkId a =
      add_dispatch_sink([&](const DispatchEvent& e) { first.push_back(e.instance); });
  {
    ScopedDispatchSink b([&](const DispatchEvent& e) { second.push_back(e.instance); });
    op.key_for("scale", scaling(1));
  }
  op.key_for("scale", scaling(2));
  remove_dispatch_sink(a);
  remove_dispatch_sink(a);  // a second removal is ignored
  op.key_for("scale", scaling(3));
  op(cpu({30}));
  auto count = [&](const std::vector<std::string>& keys) {
    return std::count(keys.begin(), keys.end(), op.instance_key());
  };
  EXPECT_EQ(count(first), 2);
  EXPECT_EQ(count(second), 1);
}

TEST(DispatchEvents, ASinkMayRemoveItself) {
  ToyOp op(with_selection_table(toy_class(unique_op("SelfRemoving"))));
  int heard = 0;
  DispatchSinkId id = 0;
  id = add_dispatch_sink([&](const DispatchEvent& e) {
    if (e.instance != op.instance_key()) return;
    ++heard;
    remove_dispatch_sink(id);
  });
  op.key_for("scale", scaling(1));
  op.key_for("scale", scaling(2));
  EXPECT_EQ(heard, 1);
}

TEST(DispatchEvents, FormatWritesOneLine) {
  DispatchEvent e;
  e.op = "ToyFwdOp";
  e.instance = "ToyFwdOp#3";
  e.interface = "scale";
  e.call = "ScalingCall(n=5, device=cpu)";
  e.device = Device::cpu();
  e.forced = "band";
  e.verdicts = {{"general", "GeneralKernel", VerdictKind::kForcedAway, ""},
                {"band", "BandKernel", VerdictKind::kRefuses, "serves 10 < n <= 50"},
                {"sm90", "Sm90Kernel", VerdictKind::kWrongDevice, "runs on [cuda], not cpu"}};
  e.outcome = DispatchOutcome::kForcedKeyRefuses;
  EXPECT_EQ(format(e),
            "ToyFwdOp#3.scale: nothing (TILEOPS_FORCE=band refuses) for ScalingCall(n=5, "
            "device=cpu); refused: band (BandKernel: serves 10 < n <= 50); sm90 (Sm90Kernel: runs "
            "on [cuda], not cpu); forced away: general");
  e.outcome = DispatchOutcome::kNotOnDevice;
  EXPECT_EQ(outcome_text(e), "nothing (no implementation runs on cpu)");
  e.outcome = DispatchOutcome::kNothingServes;
  EXPECT_EQ(outcome_text(e), "nothing (no implementation serves)");
  e.verdicts.clear();
  EXPECT_EQ(outcome_text(e), "nothing (no implementation is installed)");
}

// ---------------------------------------------------------------------------------------------
// Op::explain_call.

TEST(ExplainCall, StatesACallForANamedDeviceAndBuildsNothing) {
  Recorder recorder;
  ToyOp op(toy_class(unique_op("Explained"))
               .interface<Scaling>("scale")
               .kernel<GeneralKernel>("general")
               .kernel<Sm90Kernel>("sm90"));
  const int entry_for_before = counters().entry_for.load();
  const int builds_before = counters().builds.load();
  const std::optional<Tensor> x[] = {meta({4}), std::nullopt};

  std::vector<DispatchEvent> h200 = op.explain_call(x, Device::cuda(0), DeviceFacts{90, 132, 0});
  ASSERT_EQ(h200.size(), 1u);
  EXPECT_EQ(h200[0].instance, op.instance_key());
  EXPECT_EQ(h200[0].call, "ScalingCall(n=4, device=cuda:0)");
  EXPECT_EQ(h200[0].facts.arch, 90);
  EXPECT_THAT(verdicts_of(h200[0]),
              ElementsAre("general=wrong device: runs on [cpu], not cuda", "sm90=serves"));
  EXPECT_EQ(h200[0].winner, "sm90");

  std::vector<DispatchEvent> a100 = op.explain_call(x, Device::cuda(0), DeviceFacts{80, 108, 0});
  ASSERT_EQ(a100.size(), 1u);
  EXPECT_EQ(a100[0].verdicts[1].kind, VerdictKind::kWrongArch);
  EXPECT_EQ(a100[0].verdicts[1].reason, "built for architectures [90], device reports 80");
  EXPECT_EQ(a100[0].outcome, DispatchOutcome::kNothingServes);

  // Nothing was selected, built or cached, and no sink heard an event.
  EXPECT_TRUE(op.built_entries("scale").empty());
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_EQ(counters().entry_for.load(), entry_for_before);
  EXPECT_EQ(counters().builds.load(), builds_before);
  EXPECT_TRUE(recorder.of(op).empty());
  EXPECT_THROW(op.last_call(), RuntimeStateError);
}

TEST(ExplainCall, ReadsTheAcceleratorsFactsWhenNoneAreStated) {
  FakeAccelerator accel(90);
  ToyOp op(toy_class(unique_op("AcceleratorFacts"))
               .interface<Scaling>("scale")
               .kernel<Sm90Kernel>("sm90"));
  const std::optional<Tensor> x[] = {meta({4}), std::nullopt};
  std::vector<DispatchEvent> events = op.explain_call(x, Device::cuda(0));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].facts, (DeviceFacts{90, 132, 227 * 1024}));
  EXPECT_EQ(events[0].winner, "sm90");
  EXPECT_TRUE(op.built_entries("scale").empty());
}

TEST(ExplainCall, RealInputsCountAsMetaTensorsOfTheirGeometry) {
  ToyOp op(with_selection_table(toy_class(unique_op("RealInputs"))));
  const std::optional<Tensor> x[] = {cpu({20}), std::nullopt};
  std::vector<DispatchEvent> events = op.explain_call(x, Device::cpu());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].call, "ScalingCall(n=20, device=cpu)");
  EXPECT_EQ(events[0].winner, "band");
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_TRUE(op.built_entries("scale").empty());
}

TEST(ExplainCall, ChecksTheSignatureAndStatesNothingForAnEmptyWrite) {
  ToyOp op(with_selection_table(toy_class(unique_op("Checked"))));
  const std::optional<Tensor> wrong[] = {meta({4}, DType::kInt32), std::nullopt};
  EXPECT_THROW(op.explain_call(wrong, Device::cpu()), CheckError);
  const std::optional<Tensor> empty[] = {meta({0}), std::nullopt};
  EXPECT_TRUE(op.explain_call(empty, Device::cpu()).empty());
}

TEST(ExplainCall, TheForcedKeyCounts) {
  EnvGuard force("TILEOPS_FORCE", "general");
  ToyOp op(with_selection_table(toy_class(unique_op("ExplainForced"))));
  const std::optional<Tensor> x[] = {meta({20}), std::nullopt};
  std::vector<DispatchEvent> events = op.explain_call(x, Device::cpu());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].winner, "general");
  EXPECT_EQ(events[0].verdicts[2].kind, VerdictKind::kForcedAway);
}

// See Note [Explaining a composite]: the stages' selections, on what each stage receives, under the
// sub-ops' instance keys; neither the composite nor its sub-ops record a call or build anything.
TEST(ExplainCall, ACompositeExplainsItsStages) {
  Recorder recorder;
  ToyOp parent(composite_class(unique_op("ExplainedComposite")), {}, std::nullopt,
               [](ToyOp& self, const CallArgs& args) {
                 return through(self, args, {"first", "second"});
               });
  const std::optional<Tensor> x[] = {meta({7}), std::nullopt};
  std::vector<DispatchEvent> events = parent.explain_call(x, Device::cpu());
  std::vector<std::shared_ptr<Op>> subs = parent.held_delegates();
  ASSERT_EQ(subs.size(), 2u);
  ASSERT_EQ(events.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(events[i].op, "ToySubFwdOp");
    EXPECT_EQ(events[i].instance, subs[i]->instance_key());
    EXPECT_EQ(events[i].call, "ScalingCall(n=7, device=cpu)");
    EXPECT_EQ(events[i].winner, "general");
    EXPECT_TRUE(subs[i]->built_entries("scale").empty());
    EXPECT_THROW(subs[i]->last_call(), RuntimeStateError);
    EXPECT_TRUE(recorder.of(*subs[i]).empty());
  }
  EXPECT_THROW(parent.last_call(), RuntimeStateError);
  // A real call afterwards files both stages as usual.
  parent(cpu({7}));
  EXPECT_EQ(parent.last_call()->stages().size(), 2u);
}

TEST(ExplainCall, AnInterfaceWithNoImplementationHasNothingInstalled) {
  const std::string name = unique_op("NoKernels");
  ToyOp op(toy_class(name).interface<Scaling>("scale"));
  const std::optional<Tensor> x[] = {meta({4}), std::nullopt};
  std::vector<DispatchEvent> events = op.explain_call(x, Device::cpu());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].outcome, DispatchOutcome::kNothingServes);
  EXPECT_THAT(format(events[0]), HasSubstr("nothing (no implementation is installed)"));
}

}  // namespace
}  // namespace tileops::optest
