// Shared fixtures of the Op framework tests, which test the framework apart from the numerics.
// Everything here is fake: toy manifest entries loaded into test-local Manifests, kernels that run
// on the CPU and compute nothing, targets registered in-process and an accelerator whose "CUDA"
// devices are host memory.
//
// The backend registry is process-wide and never forgets, so every test that registers a target,
// a detector or a kernel type uses names (and, for detectors, device indices) of its own.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/env_guard.hpp"
#include "common/test_helpers.hpp"
#include "common/toy_entries.hpp"
#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/op/accelerator.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/op.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops {
inline void PrintTo(const Target& t, std::ostream* os) { *os << t.str(); }
}  // namespace tileops

namespace tileops::optest {

using Inputs = std::vector<std::optional<Tensor>>;

// ---------------------------------------------------------------------------------------------
// Toy manifest entries. "@NAME@" is replaced by the op's name, so a test can have an op class of
// its own (register_kernel_type and builders are keyed by op name, process-wide).

// y = f(x, w): one call-time input, one optional input, one output with an out buffer, two params
// (one with a construction-time rule, one nullable).
inline constexpr std::string_view kScaleEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    params:
      factor: {type: int, default: 1}
      eps: {type: "float | None", default: null}
    inputs:
      x: {dtype: T, shape: "[N]"}
      w: {dtype: T, shape: "[N]", optional: true}
    outputs:
      y: {dtype: T, shape: "[N]", buffer: out}
    shape_rules: ["factor > 0"]
  workloads:
    - {label: a, N: 4, some: [w], dtype_cases: [{T: float16}]}
    - {label: b, N: 4, dtype_cases: [{T: float16}]}
  roofline: {flops: "N"}
)yaml";

// The scale signature plus a composition of two stages of ToySubFwdOp.
inline constexpr std::string_view kCompositeEntry = R"yaml(
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
      - {name: first, op: ToySubFwdOp}
      - {name: second, op: ToySubFwdOp}
  workloads:
    - {label: a, N: 4, some: [w], dtype_cases: [{T: float16}]}
    - {label: b, N: 4, dtype_cases: [{T: float16}]}
  roofline: {flops: "2 * N"}
)yaml";

// A reduction over the first axis: an empty input may still have a non-empty output.
inline constexpr std::string_view kReduceEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, T: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[M, N]"}
    outputs:
      y: {dtype: T, shape: "[N]"}
  workloads: [{label: a, M: 2, N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "M * N"}
)yaml";

// Two dtype indices restricted by dtype_combos, and an axis declared 2 * N.
inline constexpr std::string_view kMixEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]", W: "DType[float16 | float32]"}
    inputs:
      x: {dtype: T, shape: "[2 * N]"}
      w: {dtype: W, shape: "[N]"}
    outputs:
      y: {dtype: T, shape: "[N]"}
    dtype_combos:
      - {T: float16, W: float16}
      - {T: float32, W: float16}
      - {T: float32, W: float32}
  workloads: [{label: a, N: 4, dtype_cases: [{T: float16, W: float16}]}]
  roofline: {flops: "N"}
)yaml";

// The entries the manifest-layer tests load too.
using test_common::kInplaceEntry;
using test_common::kSinkEntry;

// A Manifest holding one entry made from `entry` under `name`; kept for the process, because
// op classes point to their manifest.
inline const manifest::Manifest& toy_manifest(std::string_view entry, const std::string& name) {
  static std::mutex mutex;
  static std::deque<manifest::Manifest> manifests;
  manifest::Manifest m =
      manifest::Manifest::load_string("toy.yaml", test_common::toy_entry(entry, name));
  std::lock_guard<std::mutex> lock(mutex);
  return manifests.emplace_back(std::move(m));
}

// A new op class named `name`, bound to a toy manifest of its own; kept for the process.
inline OpClass& toy_class(const std::string& name, std::string_view entry = kScaleEntry) {
  static std::mutex mutex;
  static std::deque<OpClass> classes;
  const manifest::Manifest& m = toy_manifest(entry, name);
  std::lock_guard<std::mutex> lock(mutex);
  return classes.emplace_back(name, &m);
}

// ---------------------------------------------------------------------------------------------
// The fake kernel family of the conformance tests: interface Scaling, spec ScalingCall(n),
// identity n / 10.

struct ScalingCall : CallSpecBase {
  std::int64_t n = 0;

  friend bool operator==(const ScalingCall& a, const ScalingCall& b) {
    return a.device == b.device && a.n == b.n;
  }
  std::size_t hash() const {
    return std::hash<std::int64_t>{}(n)*31 + (device ? std::hash<Device>{}(*device) + 1 : 0);
  }
  std::string str() const {
    return "ScalingCall(n=" + std::to_string(n) + (device ? ", device=" + device->str() : "") + ")";
  }
};

inline ScalingCall scaling(std::int64_t n, std::optional<Device> device = Device::cpu()) {
  ScalingCall c;
  c.n = n;
  c.device = device;
  return c;
}

class Scaling : public KernelInterface {
 public:
  using Call = ScalingCall;
  virtual std::string_view key() const = 0;
};

// A second interface, for the contract checks that involve two interfaces.
struct ShiftCall : CallSpecBase {
  std::int64_t n = 0;
  friend bool operator==(const ShiftCall& a, const ShiftCall& b) {
    return a.device == b.device && a.n == b.n;
  }
  std::size_t hash() const { return std::hash<std::int64_t>{}(n); }
  std::string str() const { return "ShiftCall(n=" + std::to_string(n) + ")"; }
};
class Shifting : public KernelInterface {
 public:
  using Call = ShiftCall;
  virtual int shift() const = 0;
};

// The identity of a fake entry: the call's device and n // 10.
struct Bucket {
  std::optional<Device> device;
  std::int64_t tens = 0;
  friend bool operator==(const Bucket&, const Bucket&) = default;
};

}  // namespace tileops::optest

template <>
struct std::hash<tileops::optest::Bucket> {
  std::size_t operator()(const tileops::optest::Bucket& b) const noexcept {
    return std::hash<std::int64_t>{}(b.tens) * 31 +
           (b.device ? std::hash<tileops::Device>{}(*b.device) + 1 : 0);
  }
};

namespace tileops::optest {

// Process-wide counters of the fake kernels (tests read differences, never absolute values).
struct FakeCounters {
  std::atomic<int> entry_for{0};
  std::atomic<int> builds{0};
};
inline FakeCounters& counters() {
  static FakeCounters c;
  return c;
}

// What every fake entry records: the spec it was built for, the accelerator device that was
// current while it was built, and how often it was asked to tune.
class FakeEntry : public Kernel, public Scaling {
 public:
  explicit FakeEntry(const ScalingCall& c) : call(c) {
    counters().builds++;
    if (auto a = accelerator()) current_at_build = a->current_device();
  }
  ScalingCall call;
  int current_at_build = -1;
  std::atomic<int> tunes{0};

 protected:
  void on_tune_request() override { tunes++; }
};

// CRTP base of the fake implementations: CPU only, identity Bucket{device, n / 10}.
template <class Self, const char* Key>
class FakeKernel : public FakeEntry {
 public:
  using Interface = Scaling;
  using FakeEntry::FakeEntry;
  std::string_view key() const override { return Key; }
  static std::vector<DeviceType> devices() { return {DeviceType::kCPU}; }
  static EntryRecipe<Scaling> entry_for(const ScalingCall& c) {
    counters().entry_for++;
    return {Identity(Bucket{c.device, c.n / 10}), [c] { return std::make_shared<Self>(c); }};
  }
};

inline constexpr char kGeneral[] = "general";
inline constexpr char kPositive[] = "positive";
inline constexpr char kBand[] = "band";
inline constexpr char kHundreds[] = "hundreds";
inline constexpr char kNegative[] = "negative";
inline constexpr char kCudaOnly[] = "cuda_only";
inline constexpr char kOverlap[] = "overlap";
inline constexpr char kSm90[] = "sm90";
inline constexpr char kAnyDevice[] = "any_device";
inline constexpr char kSecondGeneral[] = "second_general";
inline constexpr char kCycleA[] = "cycle_a";
inline constexpr char kCycleB[] = "cycle_b";

struct GeneralKernel : FakeKernel<GeneralKernel, kGeneral> {
  using FakeKernel::FakeKernel;
  static constexpr bool general = true;
};
struct PositiveKernel : FakeKernel<PositiveKernel, kPositive> {
  using FakeKernel::FakeKernel;
  static std::optional<std::string> refusal(const ScalingCall& c) {
    if (c.n <= 0) return "serves n > 0";
    return std::nullopt;
  }
};
struct BandKernel : FakeKernel<BandKernel, kBand> {
  using FakeKernel::FakeKernel;
  static std::vector<std::string> preferred_over() { return {"positive"}; }
  static std::optional<std::string> refusal(const ScalingCall& c) {
    if (!(c.n > 10 && c.n <= 50)) return "serves 10 < n <= 50";
    return std::nullopt;
  }
};
struct HundredsKernel : FakeKernel<HundredsKernel, kHundreds> {
  using FakeKernel::FakeKernel;
  static std::vector<std::string> preferred_over() { return {"band"}; }
  static std::optional<std::string> refusal(const ScalingCall& c) {
    if (c.n <= 100) return "serves n > 100";
    return std::nullopt;
  }
};
struct NegativeKernel : FakeKernel<NegativeKernel, kNegative> {
  using FakeKernel::FakeKernel;
  static std::optional<std::string> refusal(const ScalingCall& c) {
    if (c.n >= 0) return "serves n < 0";
    return std::nullopt;
  }
};
// Preferred over everything, but never available on the CPU.
struct CudaOnlyKernel : FakeKernel<CudaOnlyKernel, kCudaOnly> {
  using FakeKernel::FakeKernel;
  static std::vector<DeviceType> devices() { return {DeviceType::kCUDA}; }
  static std::vector<std::string> preferred_over() {
    return {"general", "positive", "band", "hundreds", "negative"};
  }
};
// Overlaps Positive on 0 < n < 10 and declares no precedence.
struct OverlapKernel : FakeKernel<OverlapKernel, kOverlap> {
  using FakeKernel::FakeKernel;
  static std::optional<std::string> refusal(const ScalingCall& c) {
    if (!(c.n > 0 && c.n < 10)) return "serves 0 < n < 10";
    return std::nullopt;
  }
};
// A CUDA kernel built for sm_90 only.
struct Sm90Kernel : FakeKernel<Sm90Kernel, kSm90> {
  using FakeKernel::FakeKernel;
  static std::vector<DeviceType> devices() { return {DeviceType::kCUDA}; }
  static std::optional<std::vector<int>> supported_archs() { return std::vector<int>{90}; }
};
// Runs on the CPU and on CUDA.
struct AnyDeviceKernel : FakeKernel<AnyDeviceKernel, kAnyDevice> {
  using FakeKernel::FakeKernel;
  static std::vector<DeviceType> devices() { return {DeviceType::kCPU, DeviceType::kCUDA}; }
};
// Contract breakers.
struct SecondGeneralKernel : FakeKernel<SecondGeneralKernel, kSecondGeneral> {
  using FakeKernel::FakeKernel;
  static constexpr bool general = true;
};
struct PreferringGeneralKernel : FakeKernel<PreferringGeneralKernel, kGeneral> {
  using FakeKernel::FakeKernel;
  static constexpr bool general = true;
  static std::vector<std::string> preferred_over() { return {"positive"}; }
};
struct CycleAKernel : FakeKernel<CycleAKernel, kCycleA> {
  using FakeKernel::FakeKernel;
  static std::vector<std::string> preferred_over() { return {"cycle_b"}; }
};
struct CycleBKernel : FakeKernel<CycleBKernel, kCycleB> {
  using FakeKernel::FakeKernel;
  static std::vector<std::string> preferred_over() { return {"cycle_a"}; }
};
// Preferred over a key of another interface.
struct ForeignPreferenceKernel : FakeKernel<ForeignPreferenceKernel, kBand> {
  using FakeKernel::FakeKernel;
  static std::vector<std::string> preferred_over() { return {"shift"}; }
};

struct ShiftKernel : Kernel, Shifting {
  using Interface = Shifting;
  explicit ShiftKernel(const ShiftCall&) {}
  int shift() const override { return 1; }
  static std::vector<DeviceType> devices() { return {DeviceType::kCPU}; }
  static EntryRecipe<Shifting> entry_for(const ShiftCall& c) {
    return entry_per_call<ShiftKernel>(c);
  }
};

// The implementation table of conformance item 1 (test_conformance.cpp).
inline OpClass& with_selection_table(OpClass& cls) {
  return cls.interface<Scaling>("scale")
      .kernel<GeneralKernel>("general")
      .kernel<PositiveKernel>("positive")
      .kernel<BandKernel>("band")
      .kernel<HundredsKernel>("hundreds")
      .kernel<NegativeKernel>("negative");
}

// ---------------------------------------------------------------------------------------------
// Toy op classes.

// An op of any toy class. forward runs `body` when given; otherwise, when the class declares the
// "scale" interface, it gets the entry for ScalingCall{device, n = len(x)} through kernel_for and
// returns a fresh output; otherwise it just returns a fresh output. kernel_calls states that
// ScalingCall whenever the class declares "scale".
class ToyOp : public Op {
 public:
  using Body = std::function<CallResult(ToyOp&, const CallArgs&)>;

  ToyOp(const OpClass& cls, ParamMap params = {}, std::optional<Target> target = std::nullopt,
        Body body = {})
      : Op(cls, std::move(params), std::move(target)), body_(std::move(body)) {}

  // The typed entry point of the scale signature.
  Tensor operator()(const Tensor& x, std::optional<Tensor> w = std::nullopt,
                    const CallOptions& options = {}) {
    const std::optional<Tensor> inputs[] = {x, std::move(w)};
    CallResult r = call(inputs, options);
    return r.at(0).value_or(Tensor());
  }

  void set_body(Body body) {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = std::move(body);
  }
  int forward_calls() const { return forward_calls_.load(); }
  // The key of the entry the last in-tree forward ran ("" when none).
  std::string ran() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ran_;
  }

  // The protected members of Op, opened to the tests.
  template <class T>
  T& hold(std::string_view stage, Identity identity, std::shared_ptr<T> given = nullptr,
          const ParamMap& params = {}) {
    return delegate_for<T>(stage, std::move(identity), std::move(given), params);
  }
  Tensor output(const CallArgs& args, std::size_t i) const { return allocate_output(args, i); }

  // The default computation: the "scale" entry, when declared, then a fresh output.
  CallResult compute(const CallArgs& args) {
    if (declares_scale()) {
      std::shared_ptr<Scaling> entry = kernel_for<Scaling>(scaling_call(args));
      std::lock_guard<std::mutex> lock(mutex_);
      ran_ = std::string(entry->key());
    }
    CallResult out;
    for (std::size_t i = 0; i < op_class().entry().outputs.size(); ++i)
      out.emplace_back(allocate_output(args, i));
    return out;
  }

 protected:
  KernelCalls kernel_calls(const CallArgs& args) const override {
    if (!declares_scale()) return {};
    return {KernelCall::of<Scaling>(scaling_call(args))};
  }
  CallResult forward(const CallArgs& args) override {
    forward_calls_++;
    Body body;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body = body_;
    }
    return body ? body(*this, args) : compute(args);
  }

 private:
  bool declares_scale() const {
    return !op_class().interfaces().empty() && op_class().interfaces()[0].name == "scale";
  }
  // The call spec builder that compute and kernel_calls share.
  static ScalingCall scaling_call(const CallArgs& args) {
    return scaling(args.input(0).shape()[0], args.device());
  }

  mutable std::mutex mutex_;
  Body body_;
  std::string ran_;
  std::atomic<int> forward_calls_{0};
};

// The sub-op of the toy composites: a scale op with the general kernel only.
class ToySubOp : public ToyOp {
 public:
  static const OpClass& op_class() {
    static const OpClass& cls =
        toy_class("ToySubFwdOp").interface<Scaling>("scale").kernel<GeneralKernel>("general");
    return cls;
  }
  ToySubOp(ParamMap params, std::optional<Target> target)
      : ToyOp(op_class(), std::move(params), std::move(target)) {}
};

// A composite class named `name` with stages "first" and "second" of ToySubOp and no kernel.
inline OpClass& composite_class(const std::string& name) {
  return toy_class(name, kCompositeEntry).stage<ToySubOp>("first").stage<ToySubOp>("second");
}

// A composite forward: x through the sub-op held for `stage` (identity nullopt), then a fresh y.
inline CallResult through(ToyOp& self, const CallArgs& args,
                          const std::vector<std::string>& stages) {
  for (const std::string& s : stages) self.hold<ToySubOp>(s, Identity())(args.input(0));
  return {self.output(args, 0)};
}

// ---------------------------------------------------------------------------------------------
// Tensors.

inline Tensor cpu(Shape shape, DType dtype = DType::kFloat16) {
  return Tensor::empty(shape, dtype);
}
inline Tensor meta(Shape shape, DType dtype = DType::kFloat16) {
  return Tensor::meta(shape, dtype);
}

// A tensor that claims to live on cuda:`index`; the framework never touches its data, so host
// memory stands in for device memory.
inline Tensor on_cuda(Shape shape, int index, DType dtype = DType::kFloat16) {
  return test_common::host_backed_cuda_tensor(std::move(shape), dtype, index);
}

// ---------------------------------------------------------------------------------------------
// The fake accelerator: "CUDA" devices backed by host memory, with settable architectures. The
// guard installs it (and a host-memory CUDA allocator) and removes both when it dies.

class HostBackedAllocator final : public Allocator {
 public:
  DeviceType device_type() const noexcept override { return DeviceType::kCUDA; }
  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream&) override {
    return std::shared_ptr<void>(std::malloc(nbytes), [](void* p) { std::free(p); });
  }
};

class FakeAccelerator {
 public:
  explicit FakeAccelerator(int arch = 90, int current = 0) : state_(std::make_shared<State>()) {
    state_->current = current;
    state_->arch = arch;
    auto provider = std::make_shared<AcceleratorProvider>();
    provider->type = DeviceType::kCUDA;
    std::shared_ptr<State> s = state_;
    provider->current_device = [s] { return s->current.load(); };
    provider->set_current_device = [s](int i) {
      s->sets++;
      s->current = i;
    };
    provider->facts = [s](int) {
      s->fact_reads++;
      return DeviceFacts{s->arch.load(), 132, 227 * 1024};
    };
    install_accelerator(provider);
    previous_allocator_ = set_allocator(DeviceType::kCUDA, std::make_shared<HostBackedAllocator>());
  }
  ~FakeAccelerator() {
    install_accelerator(nullptr);
    set_allocator(DeviceType::kCUDA, previous_allocator_);
  }
  FakeAccelerator(const FakeAccelerator&) = delete;
  FakeAccelerator& operator=(const FakeAccelerator&) = delete;

  void set_current(int index) { state_->current = index; }
  int current() const { return state_->current.load(); }
  void set_arch(int arch) { state_->arch = arch; }
  int fact_reads() const { return state_->fact_reads.load(); }
  int sets() const { return state_->sets.load(); }

 private:
  struct State {
    std::atomic<int> current{0};
    std::atomic<int> arch{90};
    std::atomic<int> fact_reads{0};
    std::atomic<int> sets{0};
  };
  std::shared_ptr<State> state_;
  std::shared_ptr<Allocator> previous_allocator_;
};

// ---------------------------------------------------------------------------------------------
// Fake targets.

// What a fake target's builder saw.
struct BuilderLog {
  std::mutex mutex;
  int builds = 0;
  int runs = 0;
  int tunes = 0;
  std::vector<std::vector<std::optional<TensorSpec>>> inputs;
  std::vector<ParamMap> params;

  int build_count() {
    std::lock_guard<std::mutex> lock(mutex);
    return builds;
  }
  int run_count() {
    std::lock_guard<std::mutex> lock(mutex);
    return runs;
  }
};

// A builder whose kernels return a fresh output shaped like input 0 (or `out` when passed).
inline KernelBuilder logging_builder(std::shared_ptr<BuilderLog> log, bool tunable = true) {
  return [log, tunable](std::span<const std::optional<TensorSpec>> inputs, const ParamMap& params) {
    {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->builds++;
      log->inputs.emplace_back(inputs.begin(), inputs.end());
      log->params.push_back(params);
    }
    TargetKernel k;
    k.run = [log](const TargetCall& c) -> CallResult {
      {
        std::lock_guard<std::mutex> lock(log->mutex);
        log->runs++;
      }
      if (c.out) return {*c.out};
      const Tensor& x = *c.inputs[0];
      return {Tensor::empty(x.shape(), x.dtype(), x.device(), c.stream)};
    };
    if (tunable)
      k.request_tune = [log] {
        std::lock_guard<std::mutex> lock(log->mutex);
        log->tunes++;
      };
    return k;
  };
}

// Restores the process default target when a test that sets it ends.
struct DefaultTargetGuard {
  ~DefaultTargetGuard() { set_default_target(std::nullopt); }
};

using test_common::EnvGuard;
using test_common::error_of;

// A process-unique name for a test's targets; unique_op: the same for op classes
// ("<Stem><n>FwdOp").
inline std::string unique(std::string_view stem) {
  static std::atomic<int> n{0};
  return std::string(stem) + std::to_string(n++);
}
inline std::string unique_op(std::string_view stem) { return unique(stem) + "FwdOp"; }

}  // namespace tileops::optest
