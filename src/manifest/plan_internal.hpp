// The compiled form of a signature plan, shared by plan_build.cpp (compiling and scheduling),
// plan_check.cpp (the construction and call checks) and plan_effects.cpp (effects, roofline).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tileops/manifest/expr.hpp"
#include "tileops/manifest/model.hpp"
#include "tileops/manifest/signature_plan.hpp"

namespace tileops::manifest::detail {

// Note [Plan tensor table]: construction-time tensors, inputs and outputs share one table, in that
// order, so that a step names any tensor by one index and a SignatureCall keeps one record per row.
struct PlanTensor {
  enum class Role : std::uint8_t { kCtor, kInput, kOutput };
  const TensorDecl* decl = nullptr;
  Role role = Role::kInput;
  int role_index = 0;         // index within its group (ctor tensors, inputs or outputs)
  int slot = -1;              // its scope slot (kind Tensor: read by present() and bytes())
  int term_offset = 0;        // first entry of its axis terms in the per-call position scratch
  int optional_bit = -1;      // optional inputs: their bit in the presence key
  int dtype_index_slot = -1;  // dtype is a bare DType index: that index's slot
  bool dtype_at_call =
      false;  // a ctor tensor whose dtype the call decides (Note [Ctor tensor dtypes])
  expr::Program dtype;
  int dtype_direct = -1;            // dtype is a bare name: its slot
  std::vector<expr::Program> axes;  // per axis term (a splice evaluates to a sequence)
  std::vector<int> axis_direct;     // per axis term: its slot when it is a bare name, else -1
  std::vector<int> axis_memo;       // outputs, per axis term: its memo index, -1 for a bare name
};

// One step of a schedule. The scheduler orders steps so that each reads only solved slots.
struct Step {
  enum class Kind : std::uint8_t {
    kDTypeBind,     // slot := dtype of tensor (checked against the index's set)
    kDTypeAllowed,  // dtype of tensor is in the set of index `slot` (binds nothing)
    kDTypeCheck,    // dtype of tensor == eval(prog)
    kAlign,      // match the tensor's rank to its terms; bind its unknown splice, check known ones
    kBind,       // slot := axis `term` of tensor
    kAffine,     // slot := (axis - sign * eval(prog)) / coeff, exactly and non-negative
    kAxisCheck,  // axis `term` of tensor == eval(prog)
    kLet,        // slot := eval(prog)
    kRule,       // eval(prog) holds
  };
  Kind kind = Kind::kRule;
  int tensor = -1;
  int term = -1;
  int slot = -1;
  std::int64_t coeff = 1;
  int sign = 1;
  const expr::Program* prog = nullptr;
  int index = -1;  // kRule: the shape_rules index; kLet: the let index
};

// The solving order of one presence point, fixed when the plan is built.
struct Schedule {
  bool solvable = true;
  std::string unsolved;      // why not, when !solvable
  std::vector<int> tensors;  // plan tensors that take part (present inputs / ctor tensors)
  std::vector<Step> steps;
  std::vector<int> fill_tensor_slots;  // tensor slots some program of this schedule reads
  // Slots other call schedules write and this one does not: a reused record resets them
  // (Note [Record reuse]); the slots this schedule writes it writes before reading them.
  std::vector<int> reset_slots;
};

struct PlanData {
  std::shared_ptr<const Entry> entry;
  std::string op_name;
  std::string family;
  std::string stem;

  expr::Scope scope;
  std::vector<int> index_slots;      // per forall index
  std::vector<int> param_slots;      // per param (a ctor tensor param's slot is its tensor slot)
  std::vector<int> let_slots;        // per let, in declaration order
  std::vector<expr::Program> lets;   // per let
  std::vector<int> let_order;        // lets in dependency order
  std::vector<expr::Program> rules;  // per shape rule
  std::vector<expr::Program> mutated_when;  // per input (invalid when none)
  std::optional<expr::Program> flops;
  std::optional<expr::Program> bytes;
  int out_slot = -1;
  // Memo indices (Note [Memoised programs]) are the rule's index, let_memo_base + the let's index,
  // and PlanTensor::axis_memo for output axis terms; num_memos in all.
  int let_memo_base = 0;
  int num_memos = 0;

  std::vector<PlanTensor> tensors;
  int num_ctor = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  int total_terms = 0;
  std::vector<int>
      optional_inputs;     // input indices, in declaration order; bit i = optional_inputs[i]
  int out_bit = 0;         // presence bit of `out` (== optional_inputs.size())
  int buffer_output = -1;  // output index declaring buffer: out

  std::vector<bool> known_at_construction;  // per slot, after the construction schedule
  std::vector<int> ctor_dtype_at_call;      // plan tensors (ctor) whose dtype the call decides
  Schedule construction;                    // ctor tensors, construction lets and rules
  std::vector<Schedule> calls;              // per optional-input presence mask
  std::vector<int> discriminant_params;     // params whose values fix the construction point
  std::vector<std::unique_ptr<expr::Program>> affine_programs;  // the `e` of affine axis terms
  std::vector<const IndexDecl*> slot_index;  // per slot: its forall index, or null
  std::vector<int> slot_tensor;              // per slot: its plan tensor, or -1

  const PlanTensor& input(int i) const { return tensors[num_ctor + i]; }
  const PlanTensor& output(int i) const { return tensors[num_ctor + num_inputs + i]; }
};

// A construction point: the values of the discriminant params, and per presence key the written
// inputs and the effect branch.
struct Specialization {
  std::vector<Value> key;
  std::vector<std::uint32_t> written;  // per presence key (optional inputs + out bit)
  std::vector<EffectBranch> branches;  // per presence key
};

// Per-call scratch for axis positions; entries beyond kInlineTerms spill to the heap.
inline constexpr int kInlineTerms = 48;

}  // namespace tileops::manifest::detail
