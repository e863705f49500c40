// SignatureCall: the record of one call that passed the signature check (docs/seeds.md,
// class-structure Table 1, row 2). It is immutable once published; Op::last_call() hands it out.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/value.hpp"

namespace tileops::manifest {

class SignaturePlan;
class SignatureCall;

// One tensor of the signature as this call saw it (inputs, construction-time tensors, outputs).
struct TensorRecord {
  bool present = false;
  Shape shape;
  DType dtype = DType::kFloat32;
};

// How often one call reads and writes a tensor (the effects, docs/manifest.md §7).
struct Traffic {
  std::string_view name;
  int reads = 0;
  int writes = 0;
};

// The completed sub-op calls of a composite call, filed by stage in completion order.
using StageCalls =
    std::vector<std::pair<std::string, std::vector<std::shared_ptr<const SignatureCall>>>>;

namespace detail {
// The last evaluation of one of the plan's programs in a record (Note [Memoised programs] in
// src/manifest/plan_exec.cpp): the values of the slots it read, and what it gave.
struct ProgramMemo {
  bool valid = false;
  std::vector<Value> reads;
  Value result;
};
}  // namespace detail

class SignatureCall {
 public:
  // The solved value of an index, a construction param in index position or a let; throws
  // CheckError when the name is not one or was not solved in this call.
  const Value& index(std::string_view name) const;
  // Every solved index, param and let, in declaration order (dtype indices as DType values).
  std::vector<std::pair<std::string, Value>> indices() const;

  // Presence of an input or construction-time tensor; "out" answers has_out().
  bool present(std::string_view name) const;
  // Tensor records in signature order: construction-time tensors, inputs, then outputs.
  std::span<const TensorRecord> tensors() const noexcept { return tensors_; }
  const TensorRecord& tensor(std::string_view name) const;

  // (prod(shape) * bits + 7) / 8 of a present tensor.
  std::int64_t bytes(std::string_view name) const;
  // Reads and writes of every tensor, by the effects of this call's branch.
  std::vector<Traffic> traffic() const;
  // Sum of bytes * (reads + writes) over traffic(); CheckError when it overflows int64.
  std::int64_t derived_bytes() const;

  // The call device (nullopt when nothing decides it: docs/seeds.md, construction-and-calls §4).
  std::optional<Device> device() const noexcept { return device_; }
  bool has_out() const noexcept { return has_out_; }
  // Names of the inputs this call writes.
  std::vector<std::string> written() const;
  bool writes_input(std::size_t input_index) const noexcept {
    return (written_mask_ >> input_index) & 1u;
  }
  // The discriminant point: bit i set when optional input i is present, top bit for out.
  std::uint32_t branch_key() const noexcept { return presence_; }

  // At least one tensor is written and every written tensor (outputs and written inputs) has no
  // elements: the call runs no implementation (docs/seeds.md, construction-and-calls Table 3,
  // step 3).
  bool empty_write() const noexcept { return empty_write_; }

  // Inferred shape and dtype of output i.
  const TensorRecord& output(std::size_t i) const;

  const StageCalls& stages() const noexcept { return stages_; }
  // Fills the stages of a composite call's record; done once, before the record is published.
  void file_stages(StageCalls stages) { stages_ = std::move(stages); }

  const SignaturePlan& plan() const noexcept { return *plan_; }
  std::span<const Value> frame() const noexcept { return frame_; }

 private:
  friend class SignaturePlan;
  SignatureCall() = default;

  std::shared_ptr<const SignaturePlan> plan_;
  // Note [Record reuse]: the construction whose frame frame_ holds (ConstructionState::id), or 0.
  // SignaturePlan::check_into refills only the call's slots of a record from the same
  // construction, so a recycled record costs no allocation and no copy of the params.
  std::uint64_t construction_id_ = 0;
  std::vector<Value> frame_;
  // Per memoised program of the plan (rules, lets, output axis terms); cleared when the record
  // moves to another plan.
  std::vector<detail::ProgramMemo> memos_;
  std::vector<TensorRecord> tensors_;
  std::optional<Device> device_;
  bool has_out_ = false;
  bool empty_write_ = false;
  std::uint32_t written_mask_ = 0;
  std::uint32_t presence_ = 0;
  // Everything the schedule solves is filled in for presence_ and the input records (Note
  // [Repeated geometry] in src/manifest/plan_check.cpp).
  bool solved_ = false;
  StageCalls stages_;
};

}  // namespace tileops::manifest
