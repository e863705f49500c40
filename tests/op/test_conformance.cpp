// The conformance behaviours beyond the seeds' tables (items 1-15, each stated above its test) and
// the tuning behaviour after them, with the fake family of toy_ops.hpp (interface Scaling, spec
// ScalingCall(n), identity n / 10).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

using ::testing::StartsWith;

// Item 1. Selection by applicability and precedence: with General (general), Positive (n > 0),
// Band (10 < n <= 50, preferred over Positive), Hundreds (n > 100, preferred over Band) and
// Negative (n < 0), key_for answers general, positive, band, hundreds and negative for n = 0, 5,
// 20, 200 and -1; an implementation that is not available on the call's device changes none of
// these answers, whatever it is preferred over.
TEST(Conformance, Item01_SelectionByApplicabilityAndPrecedence) {
  ToyOp op(with_selection_table(toy_class(unique_op("Select"))));
  EXPECT_EQ(op.key_for("scale", scaling(0)), "general");
  EXPECT_EQ(op.key_for("scale", scaling(5)), "positive");
  EXPECT_EQ(op.key_for("scale", scaling(20)), "band");
  EXPECT_EQ(op.key_for("scale", scaling(200)), "hundreds");
  EXPECT_EQ(op.key_for("scale", scaling(-1)), "negative");
  // An implementation preferred over all of them but not available on the call's device changes
  // no answer.
  ToyOp more(
      with_selection_table(toy_class(unique_op("Select"))).kernel<CudaOnlyKernel>("cuda_only"));
  EXPECT_EQ(more.key_for("scale", scaling(0)), "general");
  EXPECT_EQ(more.key_for("scale", scaling(5)), "positive");
  EXPECT_EQ(more.key_for("scale", scaling(20)), "band");
  EXPECT_EQ(more.key_for("scale", scaling(200)), "hundreds");
  EXPECT_EQ(more.key_for("scale", scaling(-1)), "negative");
}

// Item 2. A second non-general implementation overlapping Positive, with no precedence between
// them, makes n = 5 "dispatch is ambiguous"; without General, n = 0 is "no implementation serves
// this call", listing every refusal as `key (Class: reason)`.
TEST(Conformance, Item02_AmbiguousAndNoImplementationErrors) {
  const std::string name = unique_op("Ambiguous");
  ToyOp op(with_selection_table(toy_class(name)).kernel<OverlapKernel>("overlap"));
  EXPECT_EQ(error_of<SelectionError>([&] { op.key_for("scale", scaling(5)); }),
            name +
                ": dispatch is ambiguous: positive, overlap all serve this call, and none is "
                "preferred over the "
                "others. Call: ScalingCall(n=5, device=cpu)");
  const std::string name2 = unique_op("Unserved");
  ToyOp no_general(toy_class(name2)
                       .interface<Scaling>("scale")
                       .kernel<PositiveKernel>("positive")
                       .kernel<BandKernel>("band")
                       .kernel<HundredsKernel>("hundreds")
                       .kernel<NegativeKernel>("negative"));
  EXPECT_EQ(error_of<SelectionError>([&] { no_general.key_for("scale", scaling(0)); }),
            name2 +
                ": no implementation serves this call: positive (PositiveKernel: serves n > 0), "
                "band (BandKernel: "
                "serves 10 < n <= 50), hundreds (HundredsKernel: serves n > 100), negative "
                "(NegativeKernel: serves "
                "n < 0). Call: ScalingCall(n=0, device=cpu)");
}

// Item 3. When no installed key lists the call's device type, the error is OpNotAvailableError
// ("in-tree kernels do not run on"), not the SelectionError of item 2.
TEST(Conformance, Item03_NoKeyListsTheDeviceType) {
  const std::string name = unique_op("Elsewhere");
  ToyOp op(toy_class(name).interface<Scaling>("scale").kernel<Sm90Kernel>("sm90"), {}, kBuiltin);
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { op(cpu({4})); }),
            name + "'s in-tree kernels do not run on cpu; known targets for this op: []");
  EXPECT_EQ(op.serving_target(), std::nullopt);  // the failing call undid its selection
}

// Item 4. kernel_for refuses a call spec of the wrong class, a field that cannot key a cache and
// stated device facts, even right after the equal unstated spec was served; key_for accepts the
// stated facts. In C++ a spec of the wrong class and a field that cannot key a cache are
// compile-time errors: kernel_for<I> takes I::Call only, and a call spec must have == and a
// field-wise hash().
struct ListSpec : CallSpecBase {
  std::vector<int> sizes;  // no hash(): cannot key a dispatch cache
  friend bool operator==(const ListSpec&, const ListSpec&) = default;
  std::string str() const { return "ListSpec"; }
};
struct ListInterface : KernelInterface {
  using Call = ListSpec;
};
struct ListKernel : Kernel, ListInterface {
  using Interface = ListInterface;
  static EntryRecipe<ListInterface> entry_for(const ListSpec&);
};
struct NotAKernel : Scaling {  // implements the interface but does not derive Kernel
  using Interface = Scaling;
  std::string_view key() const override { return ""; }
  static EntryRecipe<Scaling> entry_for(const ScalingCall&);
};
struct WrongEntryFor : FakeKernel<WrongEntryFor, kGeneral> {  // entry_for returns something else
  using FakeKernel::FakeKernel;
  static std::shared_ptr<Scaling> entry_for(const ScalingCall&);
};
template <class O, class C>
concept KernelForAccepts = requires(O& op, const C& c) {
  op.template kernel_for<Scaling>(c);
};

static_assert(CallSpec<ScalingCall>);
static_assert(!CallSpec<ListSpec>);
static_assert(!CallSpec<std::vector<int>>);
static_assert(KernelImplementation<GeneralKernel>);
static_assert(!KernelImplementation<ListKernel>);
static_assert(!KernelImplementation<NotAKernel>);
static_assert(!KernelImplementation<WrongEntryFor>);
static_assert(KernelForAccepts<ToyOp, ScalingCall>);
static_assert(!KernelForAccepts<ToyOp, ShiftCall>);

TEST(Conformance, Item04_StatedDeviceFactsAreRefusedByKernelForAcceptedByKeyFor) {
  const std::string name = unique_op("Stated");
  ToyOp op(toy_class(name)
               .interface<Scaling>("scale")
               .kernel<GeneralKernel>("general")
               .kernel<Sm90Kernel>("sm90"));
  ScalingCall plain = scaling(5);
  op.kernel_for<Scaling>(plain);
  ScalingCall stated = plain;
  stated.stated_facts = DeviceFacts{90, 132, 227 * 1024};
  // Even right after the equal unstated spec was served (a hit would silently accept them).
  EXPECT_EQ(
      error_of<ContractError>([&] { op.kernel_for<Scaling>(stated); }),
      name +
          ".scale reads the device facts from the call's device; this call spec states ['arch', "
          "'sm_count', 'smem_budget']");
  // key_for answers for a device the process is not on.
  ScalingCall on_h100 = scaling(5, Device::cuda(0));
  on_h100.stated_facts = DeviceFacts{90, 132, 227 * 1024};
  EXPECT_EQ(op.key_for("scale", on_h100), "sm90");
  auto verdicts = op.verdicts("scale", on_h100);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0],
            (std::pair<std::string, std::string>{"general", "runs on [cpu], not cuda"}));
  EXPECT_EQ(verdicts[1], (std::pair<std::string, std::string>{"sm90", ""}));
  ScalingCall on_a100 = on_h100;
  on_a100.stated_facts->arch = 80;
  EXPECT_EQ(op.verdicts("scale", on_a100)[1].second,
            "built for architectures [90], device reports 80");
  // key_for is generic over the spec type, so a spec of the wrong class is refused at run time.
  ShiftCall wrong;
  EXPECT_EQ(
      error_of<ContractError>([&] { op.key_for("scale", wrong); }),
      name +
          ".scale takes a tileops::optest::ScalingCall call spec, not tileops::optest::ShiftCall");
  EXPECT_EQ(
      error_of<ContractError>([&] { op.verdicts("scale", wrong); }),
      name +
          ".scale takes a tileops::optest::ScalingCall call spec, not tileops::optest::ShiftCall");
}

// Item 5. Call specs that differ but give the same (implementation, identity) share one entry; a
// repeated call reads no device fact; a spec with no device resolves again after the current
// device changes; an entry is built with its device current.
TEST(Conformance, Item05_EntriesSharedByIdentityHitsReadNoDeviceFactsUnstatedDeviceResolvedAgain) {
  FakeAccelerator accel(90, 0);
  ToyOp op(toy_class(unique_op("Identity"))
               .interface<Scaling>("scale")
               .kernel<AnyDeviceKernel>("any_device"));
  auto one = op.kernel_for<Scaling>(scaling(1, Device::cuda(0)));
  auto nine = op.kernel_for<Scaling>(scaling(9, Device::cuda(0)));
  EXPECT_EQ(one, nine);
  EXPECT_EQ(op.built_entries("scale").size(), 1u);
  op.kernel_for<Scaling>(scaling(19, Device::cuda(0)));
  EXPECT_EQ(op.built_entries("scale").size(), 2u);
  // A repeat call is a hit: no device fact is read, no implementation consulted.
  const int reads = accel.fact_reads();
  const int entry_fors = counters().entry_for.load();
  EXPECT_EQ(op.kernel_for<Scaling>(scaling(9, Device::cuda(0))), one);
  EXPECT_EQ(accel.fact_reads(), reads);
  EXPECT_EQ(counters().entry_for.load(), entry_fors);
  // A spec with no device names the current device; after it changes, it resolves anew.
  auto on_zero = op.kernel_for<Scaling>(scaling(1, std::nullopt));
  EXPECT_EQ(on_zero, one);
  accel.set_current(1);
  auto on_one = op.kernel_for<Scaling>(scaling(1, std::nullopt));
  EXPECT_NE(on_one, one);
  EXPECT_EQ(std::dynamic_pointer_cast<FakeEntry>(on_one)->call.device, Device::cuda(1));
  // Built with its device made current, which is restored afterwards.
  accel.set_current(0);
  auto on_two =
      std::dynamic_pointer_cast<FakeEntry>(op.kernel_for<Scaling>(scaling(1, Device::cuda(2))));
  EXPECT_EQ(on_two->current_at_build, 2);
  EXPECT_EQ(accel.current(), 0);
}

// Item 6. A registered kernel type joins the instances constructed after its registration only;
// registering the same (op, key) twice is a BackendError; a registered key equal to an in-tree
// key fails construction ("reuse keys it has").
TEST(Conformance, Item06_RegisteredKernelTypes) {
  const std::string name = unique_op("Registered");
  OpClass& cls = toy_class(name).interface<Scaling>("scale").kernel<GeneralKernel>("general");
  ToyOp before(cls);
  register_kernel_type(name, KernelType::of<PositiveKernel>("positive"));
  EXPECT_EQ(error_of<BackendError>(
                [&] { register_kernel_type(name, KernelType::of<PositiveKernel>("positive")); }),
            "an implementation 'positive' is already registered for " + name);
  before(cpu({5}));
  EXPECT_EQ(before.ran(), "general");
  ToyOp after(cls);
  after(cpu({5}));
  EXPECT_EQ(after.ran(), "positive");

  const std::string clash = unique_op("Clash");
  OpClass& clash_cls =
      toy_class(clash).interface<Scaling>("scale").kernel<GeneralKernel>("general");
  register_kernel_type(clash, KernelType::of<SecondGeneralKernel>("general"));
  EXPECT_EQ(error_of<ContractError>([&] { ToyOp op(clash_cls); }),
            "implementations registered for " + clash + " reuse keys it has: ['general']");
}

// Item 7. Under a target, equal device, dtypes and shapes call the builder once; omitting an
// optional input calls it again with an empty slot; passing `out` does not change the key; the
// params arrive by manifest name with the instance's values (an `eps` of None stays None).
TEST(Conformance, Item07_TargetKernelCache) {
  const std::string name = unique_op("Cache");
  const std::string target = unique("cache_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  const Tensor x = cpu({4});
  const Tensor w = cpu({4});
  op(x, w);
  op(cpu({4}), cpu({4}));
  EXPECT_EQ(log->build_count(), 1);
  op(x);
  EXPECT_EQ(log->build_count(), 2);
  ASSERT_EQ(log->inputs[1].size(), 2u);
  EXPECT_EQ(log->inputs[1][0], (TensorSpec{Device::cpu(), DType::kFloat16, {4}}));
  EXPECT_EQ(log->inputs[1][1], std::nullopt);
  Tensor out = cpu({4});
  Tensor y = op(x, std::nullopt, CallOptions{out, nullptr});
  EXPECT_TRUE(y.shares_storage_with(out));
  EXPECT_EQ(log->build_count(), 2);
  op(cpu({4}, DType::kFloat32));
  EXPECT_EQ(log->build_count(), 3);
  EXPECT_EQ(op.built_entries("scale").size(), 3u);
  // Params by manifest name, with the instance's values: eps=None stays None.
  ASSERT_EQ(log->params[0].size(), 2u);
  EXPECT_EQ(log->params[0].at("factor").as_int(), 1);
  EXPECT_TRUE(log->params[0].at("eps").is_none());
}

// Item 8. A builder that returns no callable kernel fails the call with OpNotAvailableError, after
// which no target is selected, last_call is unchanged, and the next call selects and builds again.
TEST(Conformance, Item08_BuilderReturningANonCallable) {
  const std::string name = unique_op("NotCallable");
  const std::string target = unique("not_callable");
  auto builds = std::make_shared<std::atomic<int>>(0);
  register_kernel_builder(name, target,
                          [builds](std::span<const std::optional<TensorSpec>>, const ParamMap&) {
                            (*builds)++;
                            return TargetKernel{};
                          });
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  op.call(Inputs{meta({4}), std::nullopt});
  auto before = op.last_call();
  const std::string not_callable =
      name + ": target '" + target + "' built a kernel for " + name + " that is not callable";
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { op(cpu({4})); }), not_callable);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(op.last_call(), before);
  EXPECT_EQ(error_of<OpNotAvailableError>([&] { op(cpu({4})); }), not_callable);
  EXPECT_EQ(builds->load(), 2);
}

// Item 9. A named target that is not known constructs and fails at the first call that runs
// (UnknownTargetError), while set_default_target refuses it at once; two claiming detectors are an
// AmbiguousTargetError, a throwing detector a BackendError; a target without a builder for the op
// is OpNotAvailableError for an op with kernels and lets a composite run its composition.
TEST(Conformance, Item09_TargetSelectionErrors) {
  DefaultTargetGuard restore;
  FakeAccelerator accel;
  ToyOp nope(with_selection_table(toy_class(unique_op("Nope"))), {}, Target::named("nope"));
  nope(cpu({0}));  // an empty write selects nothing, so it does not raise
  // Messages about targets end with a note when a backend failed to load in this process.
  EXPECT_THAT(error_of<UnknownTargetError>([&] { nope(cpu({4})); }),
              StartsWith(nope.name() + ": unknown target 'nope'; known targets: []"));
  EXPECT_EQ(error_of<UnknownTargetError>([] { set_default_target(Target::named("nope")); }),
            "set_default_target: unknown target 'nope'");
  EXPECT_EQ(default_target(), std::nullopt);

  const std::string a = unique("claims_a");
  const std::string b = unique("claims_b");
  register_detector(a, [](const Device& d) { return d == Device::cuda(12); });
  register_detector(b, [](const Device& d) { return d == Device::cuda(12); });
  ToyOp detected(with_selection_table(toy_class(unique_op("Detected"))));
  EXPECT_EQ(error_of<AmbiguousTargetError>([&] { detected(on_cuda({4}, 12)); }),
            detected.name() + ": targets ['" + a + "', '" + b +
                "'] all claim cuda:12; pass target= to choose");

  const std::string raising = unique("raising");
  register_detector(raising, [](const Device& d) -> bool {
    if (d == Device::cuda(13)) throw std::runtime_error("probe failed");
    return false;
  });
  EXPECT_EQ(error_of<BackendError>([&] { detected(on_cuda({4}, 13)); }),
            detected.name() + ": the detector of target '" + raising + "' raised: probe failed");

  // A target with no builder for the op, but one for the composite's sub-op (which inherits it).
  const std::string builderless = unique("builderless");
  register_detector(builderless, [](const Device&) { return false; });
  auto sub_log = std::make_shared<BuilderLog>();
  register_kernel_builder("ToySubFwdOp", builderless, logging_builder(sub_log));
  ToyOp owning(with_selection_table(toy_class(unique_op("Owning"))), {},
               Target::named(builderless));
  EXPECT_THAT(
      error_of<OpNotAvailableError>([&] { owning(cpu({4})); }),
      StartsWith(owning.name() + ": target '" + builderless + "' registers no kernel builder for " +
                 owning.name() + "; targets that do: []"));
  ToyOp composite(composite_class(unique_op("Composes")), {}, Target::named(builderless),
                  [](ToyOp& self, const CallArgs& args) { return through(self, args, {"first"}); });
  composite(cpu({4}));
  EXPECT_EQ(composite.forward_calls(), 1);
  EXPECT_EQ(composite.held_delegates().at(0)->target(), Target::named(builderless));
  EXPECT_EQ(sub_log->run_count(), 1);
}

// Item 10. A call whose written tensors are all empty selects and builds nothing, returns a new
// tensor of the inferred shape and dtype on the call device and becomes last_call; an empty input
// whose output has elements (a sum over an empty axis) runs the implementation.
TEST(Conformance, Item10_EmptyWrites) {
  ToyOp op(with_selection_table(toy_class(unique_op("EmptyWrite"))));
  Tensor y = op(cpu({0}, DType::kFloat32));
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_TRUE(op.built_entries("scale").empty());
  EXPECT_EQ(y.shape(), (Shape{0}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.device(), Device::cpu());
  EXPECT_EQ(op.last_call()->index("N").as_int(), 0);
  // An empty input whose output has elements runs the implementation.
  ToyOp reduce(toy_class(unique_op("Reduce"), kReduceEntry));
  CallResult r = reduce.call(Inputs{cpu({0, 4})});
  EXPECT_EQ(reduce.forward_calls(), 1);
  EXPECT_EQ(r[0]->shape(), (Shape{4}));
  EXPECT_EQ(reduce.serving_target(), kBuiltin);
}

// Item 11. The result check refuses an output that shares storage with an input it does not
// alias, the wrong shape, dtype or device, the wrong number of outputs, and an output that is not
// the `out` passed or the written input it aliases.
TEST(Conformance, Item11_ResultCheck) {
  const std::string name = unique_op("Results");
  OpClass& cls = toy_class(name);
  auto returning = [&](ToyOp::Body body) {
    return std::make_unique<ToyOp>(cls, ParamMap{}, std::nullopt, std::move(body));
  };
  const Tensor x = cpu({4});
  auto aliasing = returning([](ToyOp&, const CallArgs& a) -> CallResult { return {a.input(0)}; });
  EXPECT_EQ(
      error_of<CheckError>([&] { (*aliasing)(x); }),
      name + ": output y shares storage with a tensor it does not declare as its alias (input x)");
  auto shaped = returning([](ToyOp&, const CallArgs&) -> CallResult { return {cpu({5})}; });
  EXPECT_EQ(error_of<CheckError>([&] { (*shaped)(x); }),
            name + ": output y has shape [5], expected [4]");
  auto typed =
      returning([](ToyOp&, const CallArgs&) -> CallResult { return {cpu({4}, DType::kFloat32)}; });
  EXPECT_EQ(error_of<CheckError>([&] { (*typed)(x); }),
            name + ": output y has dtype float32, expected float16");
  auto placed = returning([](ToyOp&, const CallArgs&) -> CallResult { return {on_cuda({4}, 0)}; });
  EXPECT_EQ(error_of<CheckError>([&] { (*placed)(x); }),
            name + ": output y is on cuda:0, not on the call device cpu");
  auto counted = returning([](ToyOp&, const CallArgs&) -> CallResult {
    return {cpu({4}), cpu({4})};
  });
  EXPECT_EQ(error_of<CheckError>([&] { (*counted)(x); }),
            name + ": forward returns 2 outputs; the signature declares 1");
  auto ignores_out = returning([](ToyOp&, const CallArgs&) -> CallResult { return {cpu({4})}; });
  Tensor out = cpu({4});
  EXPECT_EQ(error_of<CheckError>([&] {
              (*ignores_out)(x, std::nullopt, CallOptions{out, nullptr});
            }),
            name + ": output y is not the out tensor the call passed");

  const std::string sink = unique_op("Sink");
  ToyOp sink_op(toy_class(sink, kSinkEntry), {}, std::nullopt,
                [](ToyOp&, const CallArgs&) -> CallResult { return {cpu({4}, DType::kFloat32)}; });
  EXPECT_EQ(error_of<CheckError>([&] { sink_op.call(Inputs{cpu({4}, DType::kFloat32)}); }),
            sink + ": forward returns 1 output; the signature declares 0");

  const std::string inplace = unique_op("Inplace");
  ToyOp inplace_op(toy_class(inplace, kInplaceEntry), {{"inplace", Value(true)}}, std::nullopt,
                   [](ToyOp&, const CallArgs&) -> CallResult { return {cpu({4})}; });
  EXPECT_EQ(error_of<CheckError>([&] { inplace_op.call(Inputs{cpu({4})}); }),
            inplace + ": output y is not input x, which it aliases");
  EXPECT_THROW(aliasing->last_call(), RuntimeStateError);
}

// Item 12. The signature check names the declaration: a dtype assignment outside dtype_combos, two
// inputs disagreeing on one DType index, an odd axis declared `2 * N`, tensors on two devices.
TEST(Conformance, Item12_SignatureChecksNameTheDeclaration) {
  const std::string mix = unique_op("Mix");
  ToyOp mix_op(toy_class(mix, kMixEntry));
  EXPECT_EQ(error_of<CheckError>([&] {
              mix_op.call(Inputs{cpu({8}), cpu({4}, DType::kFloat32)});
            }),
            mix + ": [T, W] = [float16, float32] is not a dtype_combos row");
  EXPECT_EQ(error_of<CheckError>([&] {
              mix_op.call(Inputs{cpu({7}), cpu({4})});
            }),
            mix + ": x axis 0 is not 2 * N; got 7");
  const std::string scale = unique_op("Scale");
  ToyOp scale_op(toy_class(scale));
  EXPECT_EQ(error_of<CheckError>([&] { scale_op(cpu({4}), cpu({4}, DType::kFloat32)); }),
            scale + ": w dtype differs from T (float16); got float32");
  EXPECT_EQ(error_of<CheckError>([&] { scale_op(cpu({4}), on_cuda({4}, 0)); }),
            scale + ": needs every tensor on one device; got [x on cpu, w on cuda:0]");
  EXPECT_EQ(scale_op.forward_calls(), 0);
}

// Item 13. Operator names per effect branch, and instance keys `Class#N` with N strictly increasing
// and never reused. The compile-boundary registration is out of scope here (no torch); what a C++
// port keeps is the effect branch operator names and the instance keys.
TEST(Conformance, Item13_EffectBranchOperatorNamesAndInstanceKeys) {
  ToyOp scale(toy_class("ToyBranchFwdOp"));
  const Inputs x_only{cpu({4}), std::nullopt};
  EXPECT_EQ(scale.effect_branch(x_only, false).operator_name, "tileops::toy_branch_fwd");
  EXPECT_EQ(scale.effect_branch(x_only, true).operator_name, "tileops::toy_branch_fwd_out");
  ToyOp inplace(toy_class("ToyInplaceFwdOp", kInplaceEntry), {{"inplace", Value(true)}});
  ToyOp copying(toy_class("ToyInplaceFwdOp", kInplaceEntry), {{"inplace", Value(false)}});
  EXPECT_EQ(inplace.effect_branch(Inputs{cpu({4})}, false).operator_name,
            "tileops::toy_inplace_fwd_writes_x");
  EXPECT_EQ(inplace.effect_branch(Inputs{cpu({4})}, false).written, std::vector<std::string>{"x"});
  EXPECT_EQ(copying.effect_branch(Inputs{cpu({4})}, false).operator_name,
            "tileops::toy_inplace_fwd");

  const std::string name = unique_op("Keys");
  OpClass& cls = toy_class(name);
  std::vector<std::int64_t> numbers;
  for (int i = 0; i < 4; ++i) {
    auto op = std::make_shared<ToyOp>(cls);  // destroyed each round: its number is not reused
    const std::string& key = op->instance_key();
    ASSERT_EQ(key.rfind(name + "#", 0), 0u) << key;
    numbers.push_back(std::stoll(key.substr(name.size() + 1)));
    EXPECT_EQ(find_instance(key), op);
    std::string kept = key;
    op.reset();
    EXPECT_EQ(find_instance(kept), nullptr);
  }
  for (std::size_t i = 1; i < numbers.size(); ++i) EXPECT_GT(numbers[i], numbers[i - 1]);
}

// Item 14. A call on meta tensors returns meta tensors of the inferred shape and dtype, builds
// nothing, selects no target and still becomes last_call. (The metadata_values part has no C++
// counterpart: SignatureCall keeps no tensors.)
TEST(Conformance, Item14_MetaCall) {
  const std::string name = unique_op("Meta");
  const std::string target = unique("meta14");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  for (std::optional<Target> t :
       {std::optional<Target>(), std::optional<Target>(Target::named(target))}) {
    ToyOp op(with_selection_table(toy_class(name)), {}, t);
    const int builds = counters().builds.load();
    Tensor y = op(meta({9}, DType::kFloat32), meta({9}, DType::kFloat32));
    EXPECT_TRUE(y.is_meta());
    EXPECT_EQ(y.shape(), (Shape{9}));
    EXPECT_EQ(y.dtype(), DType::kFloat32);
    EXPECT_EQ(counters().builds.load(), builds);
    EXPECT_EQ(log->build_count(), 0);
    EXPECT_EQ(op.serving_target(), std::nullopt);
    EXPECT_EQ(op.forward_calls(), 0);
    EXPECT_EQ(op.last_call()->device(), Device::meta());
    EXPECT_EQ(op.last_call()->index("N").as_int(), 9);
  }
}

// Item 15. A composite's last_call has every stage in order (empty where no sub-call ran, sub-calls
// in completion order); delegate_for returns the held sub-op for a repeated (stage, identity),
// refuses it under another stage and refuses an undeclared stage; a sub-op not held that completes
// a call inside the composite's fails that call and keeps the previous last_call.
TEST(Conformance, Item15_CompositeStagesAndHolding) {
  ToyOp op(composite_class(unique_op("Stages")), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) -> CallResult {
             ToySubOp& second = self.hold<ToySubOp>("second", Identity());
             second(cpu({1}));
             second(cpu({2}));
             return {self.output(a, 0)};
           });
  op(cpu({4}));
  auto rec = op.last_call();
  ASSERT_EQ(rec->stages().size(), 2u);
  EXPECT_EQ(rec->stages()[0].first, "first");
  EXPECT_TRUE(rec->stages()[0].second.empty());
  EXPECT_EQ(rec->stages()[1].first, "second");
  ASSERT_EQ(rec->stages()[1].second.size(), 2u);
  EXPECT_EQ(rec->stages()[1].second[0]->index("N").as_int(), 1);
  EXPECT_EQ(rec->stages()[1].second[1]->index("N").as_int(), 2);

  ToySubOp& held = op.hold<ToySubOp>("second", Identity());
  EXPECT_EQ(&op.hold<ToySubOp>("second", Identity()), &held);
  EXPECT_EQ(&op.hold<ToySubOp>("second", Identity(),
                               std::make_shared<ToySubOp>(ParamMap{}, std::nullopt)),
            &held);
  std::shared_ptr<ToySubOp> shared = std::dynamic_pointer_cast<ToySubOp>(op.held_delegates().at(0));
  ASSERT_TRUE(shared);
  EXPECT_EQ(
      error_of<CheckError>([&] { op.hold<ToySubOp>("first", Identity(), shared); }),
      op.name() + ": already holds this ToySubFwdOp for stage 'second'; one instance is held once");
  EXPECT_EQ(error_of<CheckError>([&] { op.hold<ToySubOp>("third", Identity()); }),
            op.name() + ": 'third' is not a stage of " + op.name());

  auto stray = std::make_shared<ToySubOp>(ParamMap{}, std::nullopt);
  op.set_body([stray](ToyOp& self, const CallArgs& a) -> CallResult {
    (*stray)(a.input(0));
    return {self.output(a, 0)};
  });
  EXPECT_EQ(error_of<RuntimeStateError>([&] { op(cpu({4})); }),
            op.name() +
                ": ToySubFwdOp completed a call inside this call but is not held through "
                "delegate_for, so its call cannot be filed under a stage");
  EXPECT_EQ(op.last_call(), rec);
}

// Tuning (docs/seeds.md, class-structure §2): after request_tune(), every entry built later is
// tuned right after it is built, each kernel at most once, and sub-ops held later inherit tuned
// mode.
TEST(Conformance, Tuning_EntriesBuiltAfterRequestAreTunedOnceAndLaterSubOpsInherit) {
  ToyOp op(with_selection_table(toy_class(unique_op("Tune"))));
  op.request_tune();
  EXPECT_TRUE(op.tune_requested());
  auto built = std::dynamic_pointer_cast<FakeEntry>(op.kernel_for<Scaling>(scaling(5)));
  EXPECT_EQ(built->tunes.load(), 1);  // tuned right after building
  op.request_tune();
  op(cpu({5}));
  EXPECT_EQ(built->tunes.load(), 1);  // kernels tune once
  ASSERT_EQ(op.iter_kernels().size(), 1u);

  // Tuning requested after building reaches the built kernels.
  ToyOp late(with_selection_table(toy_class(unique_op("Tune"))));
  auto before = std::dynamic_pointer_cast<FakeEntry>(late.kernel_for<Scaling>(scaling(20)));
  EXPECT_EQ(before->tunes.load(), 0);
  late.request_tune();
  EXPECT_EQ(before->tunes.load(), 1);

  // Sub-ops held after the request inherit tuned mode, built or injected.
  ToyOp parent(composite_class(unique_op("TuneParent")));
  ToySubOp& early = parent.hold<ToySubOp>("first", Identity());
  parent.request_tune();
  EXPECT_TRUE(early.tune_requested());
  ToySubOp& built_later = parent.hold<ToySubOp>("second", Identity(1));
  EXPECT_TRUE(built_later.tune_requested());
  auto injected = std::make_shared<ToySubOp>(ParamMap{}, std::nullopt);
  parent.hold<ToySubOp>("second", Identity(2), injected);
  EXPECT_TRUE(injected->tune_requested());
  built_later(cpu({4}));
  ASSERT_EQ(parent.iter_kernels().size(), 1u);
  EXPECT_EQ(std::dynamic_pointer_cast<FakeEntry>(parent.iter_kernels()[0])->tunes.load(), 1);
}

TEST(Conformance, Tuning_TargetKernelsTuneOnceAndUntunableOnesWarnOnce) {
  const std::string name = unique_op("TuneTarget");
  const std::string tunable = unique("tunable");
  const std::string untunable = unique("untunable");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, tunable, logging_builder(log, true));
  register_kernel_builder(name, untunable, logging_builder(std::make_shared<BuilderLog>(), false));
  OpClass& cls = with_selection_table(toy_class(name));
  ToyOp op(cls, {}, Target::named(tunable));
  op(cpu({4}));
  op(cpu({8}));
  op.request_tune();
  EXPECT_EQ(log->tunes, 2);
  op.request_tune();
  EXPECT_EQ(log->tunes, 2);  // each kernel is sent one request
  op(cpu({16}));             // built in tuned mode: tuned right after building
  EXPECT_EQ(log->tunes, 3);

  ToyOp quiet(cls, {}, Target::named(untunable));
  quiet(cpu({4}));
  quiet(cpu({8}));
  ::testing::internal::CaptureStderr();
  quiet.request_tune();
  quiet(cpu({16}));
  quiet.request_tune();
  const std::string err = ::testing::internal::GetCapturedStderr();
  // Warned once, naming the op and the target.
  EXPECT_EQ(err, "tileops: warning: " + name + ": the kernel target '" + untunable +
                     "' built has no request_tune; tuning is skipped\n");
}

}  // namespace
}  // namespace tileops::optest
