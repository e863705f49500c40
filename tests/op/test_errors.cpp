// The errors of the op framework (include/tileops/core/error.hpp, docs/framework.md): their types,
// their text, TILEOPS_FORCE and TILEOPS_LOG=dispatch. After each error the instance stays usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Messages about targets end with a note when some backend failed to load in this process
// (test_backend_plugin.cpp makes some fail), so those are compared by their beginning.

// The instance still answers a good call after an error (a meta call never selects a target).
void still_usable(ToyOp& op) {
  Tensor y = op(meta({4}));
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(op.last_call()->index("N").as_int(), 4);
}

TEST(Errors, UnknownTargetAtTheFirstNonEmptyCallNotAtConstruction) {
  const std::string name = unique_op("Unknown");
  std::optional<ToyOp> op;
  EXPECT_NO_THROW(op.emplace(with_selection_table(toy_class(name)), ParamMap{},
                             Target::named("no_such_target")));
  op->call(Inputs{cpu({0}), std::nullopt});
  EXPECT_THAT(error_of<UnknownTargetError>([&] { (*op)(cpu({4})); }),
              StartsWith(name + ": unknown target 'no_such_target'; known targets: []"));
  EXPECT_EQ(op->serving_target(), std::nullopt);
  EXPECT_THROW((*op)(cpu({4})), UnknownTargetError);  // selects again, fails again
  still_usable(*op);
}

TEST(Errors, AmbiguousTarget) {
  FakeAccelerator accel;
  const std::string a = unique("amb_a");
  const std::string b = unique("amb_b");
  register_detector(a, [](const Device& d) { return d == Device::cuda(15); });
  register_detector(b, [](const Device& d) { return d == Device::cuda(15); });
  const std::string name = unique_op("Ambiguous");
  ToyOp op(with_selection_table(toy_class(name)));
  EXPECT_EQ(
      error_of<AmbiguousTargetError>([&] { op(on_cuda({4}, 15)); }),
      name + ": targets ['" + a + "', '" + b + "'] all claim cuda:15; pass target= to choose");
  EXPECT_EQ(op.serving_target(), std::nullopt);
  op(cpu({4}));  // another device selects without trouble
  EXPECT_EQ(op.serving_target(), kBuiltin);
}

TEST(Errors, BackendErrorForARaisingDetectorAndDuplicateRegistrations) {
  FakeAccelerator accel;
  const std::string raising = unique("raises");
  register_detector(raising, [](const Device& d) -> bool {
    if (d == Device::cuda(16)) throw std::runtime_error("driver not found");
    return false;
  });
  const std::string name = unique_op("Raising");
  ToyOp op(with_selection_table(toy_class(name)));
  EXPECT_EQ(error_of<BackendError>([&] { op(on_cuda({4}, 16)); }),
            name + ": the detector of target '" + raising + "' raised: driver not found");
  still_usable(op);
  op(cpu({4}));
  EXPECT_EQ(op.serving_target(), kBuiltin);

  EXPECT_EQ(error_of<BackendError>(
                [&] { register_detector(raising, [](const Device&) { return false; }); }),
            "a detector for target '" + raising + "' is already registered");
  register_kernel_builder(name, raising, logging_builder(std::make_shared<BuilderLog>()));
  EXPECT_EQ(error_of<BackendError>([&] {
              register_kernel_builder(name, raising,
                                      logging_builder(std::make_shared<BuilderLog>()));
            }),
            "target '" + raising + "' already registers a kernel builder for " + name);
}

TEST(Errors, OpNotAvailable) {
  // A named target with no builder for a kernel-owning op: no fall back to the in-tree kernels.
  const std::string target = unique("nobuilder");
  const std::string other = unique_op("Other");
  register_detector(target, [](const Device&) { return false; });
  const std::string name = unique_op("NoBuilder");
  const std::string with_builder = unique("hasbuilder");
  register_kernel_builder(name, with_builder, logging_builder(std::make_shared<BuilderLog>()));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  EXPECT_THAT(error_of<OpNotAvailableError>([&] { op(cpu({4})); }),
              StartsWith(name + ": target '" + target + "' registers no kernel builder for " +
                         name + "; targets that do: ['" + with_builder +
                         "']. There is no fall back to the in-tree implementation: pass "
                         "target=BUILTIN to run it"));
  EXPECT_EQ(op.forward_calls(), 0);
  still_usable(op);

  // A composite that declares kernels of its own gets the same error.
  ToyOp owning_composite(composite_class(unique_op("KernelComposite"))
                             .interface<Scaling>("scale")
                             .kernel<GeneralKernel>("general"),
                         {}, Target::named(target));
  EXPECT_THAT(error_of<OpNotAvailableError>([&] { owning_composite(cpu({4})); }),
              StartsWith(owning_composite.name() + ": target '" + target +
                         "' registers no kernel builder for " + owning_composite.name() +
                         "; targets that do: []"));

  // In-tree kernels that do not run on the call's device.
  const std::string cuda_only = unique_op("CudaOnly");
  ToyOp elsewhere(toy_class(cuda_only).interface<Scaling>("scale").kernel<Sm90Kernel>("sm90"));
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { elsewhere(cpu({4})); }),
            cuda_only + "'s in-tree kernels do not run on cpu; known targets for this op: []");
  still_usable(elsewhere);

  // An interface the op does not declare.
  ToyOp plain(with_selection_table(toy_class(other)));
  EXPECT_THAT(
      error_of<OpNotAvailableError>([&] { plain.kernel_for<Shifting>(ShiftCall{}); }),
      StartsWith(other + " has no in-tree implementation for this interface "
                         "(tileops::optest::Shifting), so it needs a target that registers one"));
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { plain.key_for("shift", scaling(1)); }),
            other +
                " has no in-tree implementation for 'shift', so it needs a target that registers "
                "one; known "
                "targets for this op: []");
  plain(cpu({4}));
}

// A sub-op class that no toy composite declares as a stage.
class UndeclaredSubOp : public ToyOp {
 public:
  using ToyOp::ToyOp;
};

TEST(Errors, DelegateOfAnotherTypeNamesTheStageTypeAndTheRequestedOne) {
  const std::string name = unique_op("Mismatch");
  ToyOp op(composite_class(name));
  EXPECT_EQ(error_of<ContractError>([&] { op.hold<UndeclaredSubOp>("first", Identity()); }),
            name +
                ": stage 'first' holds ToySubFwdOp ops (tileops::optest::ToySubOp), not the "
                "requested tileops::optest::(anonymous namespace)::UndeclaredSubOp");
  EXPECT_TRUE(op.held_delegates().empty());
}

TEST(Errors, ArchitectureRefusalOnTheFakeAccelerator) {
  FakeAccelerator accel(80);
  const std::string name = unique_op("Arch");
  ToyOp op(toy_class(name).interface<Scaling>("scale").kernel<Sm90Kernel>("sm90"));
  // Construction read no device fact; the refusal comes when the kernel is first selected.
  EXPECT_EQ(accel.fact_reads(), 0);
  EXPECT_EQ(error_of<SelectionError>([&] { op(on_cuda({4}, 0)); }),
            name +
                ": no implementation serves this call: sm90 (Sm90Kernel: built for architectures "
                "[90], device "
                "reports 80). Call: ScalingCall(n=4, device=cuda:0)");
  EXPECT_GT(accel.fact_reads(), 0);
  accel.set_arch(90);
  op(on_cuda({4}, 0));
  EXPECT_EQ(op.ran(), "sm90");
  EXPECT_EQ(op.last_call()->device(), Device::cuda(0));
}

TEST(Errors, SelectionErrorsListEveryRefusal) {
  const std::string name = unique_op("Refusals");
  ToyOp op(toy_class(name)
               .interface<Scaling>("scale")
               .kernel<PositiveKernel>("positive")
               .kernel<Sm90Kernel>("sm90")
               .kernel<OverlapKernel>("overlap"));
  EXPECT_EQ(op.key_for("scale", scaling(20)), "positive");
  EXPECT_EQ(
      error_of<SelectionError>([&] { op.key_for("scale", scaling(-2)); }),
      name +
          ": no implementation serves this call: positive (PositiveKernel: serves n > 0), sm90 "
          "(Sm90Kernel: runs on [cuda], not cpu), overlap (OverlapKernel: serves 0 < n < 10). "
          "Call: "
          "ScalingCall(n=-2, device=cpu)");
  EXPECT_EQ(error_of<SelectionError>([&] { op.key_for("scale", scaling(3)); }),
            name +
                ": dispatch is ambiguous: positive, overlap all serve this call, and none is "
                "preferred over the "
                "others. Call: ScalingCall(n=3, device=cpu)");
  op(cpu({20}));
  EXPECT_EQ(op.ran(), "positive");
}

TEST(Errors, ContractErrorsAtConstruction) {
  auto contract_error = [](OpClass& cls) {
    return error_of<ContractError>([&] { ToyOp op(cls); });
  };
  const std::string reused = unique_op("Reused");
  EXPECT_EQ(contract_error(toy_class(reused)
                               .interface<Scaling>("scale")
                               .kernel<GeneralKernel>("general")
                               .kernel<PositiveKernel>("general")),
            reused + " installs the key 'general' twice");
  const std::string generals = unique_op("Generals");
  EXPECT_EQ(contract_error(toy_class(generals)
                               .interface<Scaling>("scale")
                               .kernel<GeneralKernel>("general")
                               .kernel<SecondGeneralKernel>("second_general")),
            generals + ": interface 'scale' has more than one general implementation");
  const std::string foreign = unique_op("Foreign");
  EXPECT_EQ(contract_error(toy_class(foreign)
                               .interface<Scaling>("scale")
                               .interface<Shifting>("shift")
                               .kernel<ForeignPreferenceKernel>("band")
                               .kernel<ShiftKernel>("shift")),
            foreign +
                ": ForeignPreferenceKernel ('band') is preferred over ['shift']; preferred_over "
                "names only other "
                "implementations of interface 'scale'");
  const std::string missing = unique_op("Missing");
  EXPECT_EQ(
      contract_error(toy_class(missing).interface<Scaling>("scale").kernel<BandKernel>("band")),
      missing +
          ": BandKernel ('band') is preferred over ['positive']; preferred_over names only other "
          "implementations of interface 'scale'");
  const std::string general_prefers = unique_op("GeneralPrefers");
  EXPECT_EQ(
      contract_error(toy_class(general_prefers)
                         .interface<Scaling>("scale")
                         .kernel<PreferringGeneralKernel>("general")
                         .kernel<PositiveKernel>("positive")),
      general_prefers +
          ": PreferringGeneralKernel ('general') is general and is preferred over ['positive']; a "
          "general implementation ranks below every other and declares no preference");
  const std::string cycle = unique_op("Cycle");
  EXPECT_EQ(contract_error(toy_class(cycle)
                               .interface<Scaling>("scale")
                               .kernel<CycleAKernel>("cycle_a")
                               .kernel<CycleBKernel>("cycle_b")),
            cycle + ": preferences form a cycle through 'cycle_a'");
  const std::string orphan = unique_op("Orphan");
  EXPECT_EQ(contract_error(toy_class(orphan)
                               .interface<Scaling>("scale")
                               .kernel<GeneralKernel>("general")
                               .kernel<ShiftKernel>("shift")),
            orphan + " keys implement none of its kernel interfaces: ['shift']");
}

TEST(Errors, ForcedImplementationServesOrFailsWithItsReason) {
  OpClass& cls = with_selection_table(toy_class(unique_op("Forced")));
  {
    EnvGuard force("TILEOPS_FORCE", "general");
    ToyOp op(cls);
    op(cpu({5}));
    EXPECT_EQ(op.ran(), "general");
    EXPECT_EQ(op.key_for("scale", scaling(200)), "general");
  }
  {
    EnvGuard force("TILEOPS_FORCE", "band");
    ToyOp op(cls);
    EXPECT_EQ(
        error_of<SelectionError>([&] { op(cpu({5})); }),
        cls.name() +
            ": TILEOPS_FORCE=band refuses this call: band (BandKernel: serves 10 < n <= 50). Call: "
            "ScalingCall(n=5, device=cpu)");
    EXPECT_EQ(op.forward_calls(), 1);
    EXPECT_EQ(op.serving_target(), std::nullopt);
    op(cpu({20}));
    EXPECT_EQ(op.ran(), "band");
  }
  {
    EnvGuard force("TILEOPS_FORCE", "no_such_key");  // a key of no interface of this op: ignored
    ToyOp op(cls);
    EXPECT_EQ(op.key_for("scale", scaling(5)), "positive");
  }
}

TEST(Errors, DispatchLogPrintsSelectionsAndRefusals) {
  EnvGuard log("TILEOPS_LOG", "dispatch");
  const std::string name = unique_op("Logged");
  ToyOp op(with_selection_table(toy_class(name)));
  ::testing::internal::CaptureStderr();
  op(cpu({20}));
  op(cpu({20}));  // a hit selects nothing and prints nothing
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "tileops dispatch: " + op.instance_key() +
                     ".scale: band for ScalingCall(n=20, device=cpu); refused: hundreds "
                     "(HundredsKernel: serves n > "
                     "100); negative (NegativeKernel: serves n < 0)\n");
  // Without a winner the line says why; forced-away implementations are listed.
  ::testing::internal::CaptureStderr();
  {
    EnvGuard force("TILEOPS_FORCE", "band");
    EXPECT_THROW(op.key_for("scale", scaling(5)), SelectionError);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "tileops dispatch: " + op.instance_key() +
                ".scale: nothing (TILEOPS_FORCE=band refuses) for ScalingCall(n=5, device=cpu); "
                "refused: band (BandKernel: serves 10 < n <= 50); hundreds (HundredsKernel: serves "
                "n > 100); negative (NegativeKernel: serves n < 0); forced away: general, "
                "positive\n");
}

// See Note [Errors inside a stage]: a sub-op's error reaches the composite's caller with its type,
// prefixed with the composite and the stage it came from.
TEST(Errors, AStageErrorNamesTheCompositeAndTheStage) {
  const std::string name = unique_op("StageError");
  ToyOp op(composite_class(name), {}, std::nullopt, [](ToyOp& self, const CallArgs& args) {
    // The sub-op's x is [N]: a rank-2 tensor fails the sub-op's own check.
    self.hold<ToySubOp>("second", Identity())(cpu({2, 2}));
    return CallResult{self.output(args, 0)};
  });
  std::string message;
  try {
    op(cpu({4}));
  } catch (const CheckError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind(name + ": stage 'second': ", 0), 0u) << message;
  const std::string sub = op.held_delegates().at(0)->name();
  EXPECT_NE(message.find("stage 'second': " + sub + ": "), std::string::npos) << message;
}

}  // namespace
}  // namespace tileops::optest
