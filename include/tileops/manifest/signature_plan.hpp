// SignaturePlan: everything one op class's manifest signature generates (docs/framework.md): the
// construction check, the call check, output inference (the same code serves meta tensors), the
// effect branch and operator name of a call, the result check and roofline evaluation.
//
// A plan is compiled from its entry once (every expression parsed, kind-checked and resolved to
// frame slots; the solving order of every presence point fixed) and specialised lazily, once per
// construction point, under a lock. The call path parses nothing and takes no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/model.hpp"
#include "tileops/manifest/signature_call.hpp"

namespace tileops::manifest {

namespace detail {
struct PlanData;
struct Specialization;
}  // namespace detail

// The state construction leaves behind: the checked params and solved construction indices, the
// construction-time tensors, and the plan's specialisation for this construction point.
struct ConstructionState {
  std::uint64_t id = 0;      // process-unique, never reused (Note [Record reuse])
  std::vector<Value> frame;  // one Value per plan slot
  std::vector<std::optional<Tensor>> ctor_tensors;  // per construction-time tensor param
  // The device a `device: str` param names (docs/manifest.md §3), parsed once at construction.
  std::optional<Device> device;
  std::shared_ptr<const detail::Specialization> point;
};

// The effects of a call (docs/manifest.md §7): which inputs it writes, whether `out` was passed
// and which outputs it emits. One compile-boundary operator per distinct branch.
struct EffectBranch {
  std::vector<std::string> written;  // sorted
  bool has_out = false;
  std::vector<std::string> emitted;  // declaration order
  std::string operator_name;         // "tileops::<family>_<op>[_writes_x][_out][_without_y]"
  friend bool operator==(const EffectBranch&, const EffectBranch&) = default;
};

struct RooflineResult {
  std::int64_t flops = 0;
  std::int64_t bytes = 0;
};

class SignaturePlan : public std::enable_shared_from_this<SignaturePlan> {
 public:
  // Compiles the entry's signature. Throws ManifestError naming entry, field and column for an
  // expression that does not compile, and for an index no presence point can solve.
  static std::shared_ptr<const SignaturePlan> build(std::shared_ptr<const Entry> entry);
  ~SignaturePlan();

  const Entry& entry() const noexcept;
  const std::string& op_name() const noexcept;

  // Construction check (docs/seeds.md, construction-and-calls Table 1, step 2): params against
  // their types (defaults applied, unknown names refused), a `device` param that names no device,
  // construction-time tensors, every rule and let decidable from them. Throws CheckError
  // "<Op>: ...".
  ConstructionState construct(const ParamMap& params,
                              std::span<const std::optional<Tensor>> ctor_tensors = {}) const;

  // The checked params of a construction (defaults filled in), in declaration order.
  ParamMap params_of(const ConstructionState& state) const;

  // Call check (docs/framework.md). `inputs` in signature order, std::nullopt for an absent
  // optional input; `out` null when not passed. Throws CheckError "<Op>: ...".
  SignatureCall check(const ConstructionState& state, std::span<const std::optional<Tensor>> inputs,
                      const Tensor* out = nullptr) const;
  // check() into `call`, reusing its storage: a record last filled from the same construction
  // has only the call's slots refilled (Note [Record reuse] in signature_call.hpp), and one whose
  // inputs have the geometry it was last solved for is not solved again (Note [Repeated geometry]
  // in plan_check.cpp). `call` must
  // not be published while it is refilled; after a throw it holds no valid record.
  // `fallback_device` settles the call device when no call-time tensor, no `device` param and no
  // construction-time tensor does (docs/seeds.md, construction-and-calls §4: the current device
  // of the process's accelerator); it is asked only then, and may answer nullopt (no accelerator).
  using DeviceFallback = std::optional<Device> (*)();
  // The inputs are borrowed (Note [Borrowed call inputs] in tileops/core/tensor.hpp).
  void check_into(SignatureCall& call, const ConstructionState& state, TensorRefs inputs,
                  const Tensor* out = nullptr, DeviceFallback fallback_device = nullptr) const;
  void check_into(SignatureCall& call, const ConstructionState& state,
                  std::span<const std::optional<Tensor>> inputs, const Tensor* out = nullptr,
                  DeviceFallback fallback_device = nullptr) const {
    check_into(call, state, BorrowedTensors(inputs).refs(), out, fallback_device);
  }
  // An empty record for check_into.
  static std::unique_ptr<SignatureCall> new_record();

  // Result check (docs/framework.md): `results` in output order against the record of the call.
  void check_result(const SignatureCall& call, TensorRefs inputs, const Tensor* out,
                    std::span<const std::optional<Tensor>> results) const;
  void check_result(const SignatureCall& call, std::span<const std::optional<Tensor>> inputs,
                    const Tensor* out, std::span<const std::optional<Tensor>> results) const {
    check_result(call, BorrowedTensors(inputs).refs(), out, results);
  }

  // The effect branch of a call with these optional inputs present.
  EffectBranch effect_branch(const ConstructionState& state, std::uint32_t presence) const;
  // The presence key check() would give a call with these inputs and out.
  std::uint32_t presence_of(std::span<const std::optional<Tensor>> inputs, bool has_out) const;

  // Roofline of a completed call (docs/manifest.md §7); bytes derived from the effects when the
  // entry gives none. Throws CheckError "<Op>: roofline.<field>: ..." when a formula fails to
  // evaluate (the evaluator's overflow or domain error), EvalError when it yields a value that is
  // not an int.
  RooflineResult eval_roofline(const SignatureCall& call) const;

  // "norm_rms_norm_fwd" for ("norm", "RMSNormFwdOp") (docs/manifest.md §7).
  static std::string operator_stem(const std::string& family, const std::string& op);

  const detail::PlanData& data() const noexcept { return *data_; }

 private:
  SignaturePlan() = default;
  std::shared_ptr<const detail::Specialization> specialise(const std::vector<Value>& frame) const;
  // Note [Repeated geometry] in plan_check.cpp: whether `call` holds what solving these inputs
  // would give, and the solving itself.
  bool solved_for(const SignatureCall& call, const ConstructionState& state, TensorRefs inputs,
                  std::uint32_t presence) const;
  void solve_into(SignatureCall& call, const ConstructionState& state, TensorRefs inputs,
                  std::uint32_t presence, std::uint32_t written) const;

  std::unique_ptr<detail::PlanData> data_;
  mutable std::mutex specialisations_mutex_;
  mutable std::vector<std::shared_ptr<const detail::Specialization>> specialisations_;
};

}  // namespace tileops::manifest
