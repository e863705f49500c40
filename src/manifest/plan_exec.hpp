// Running a schedule over one call's frame: the binds, solves and checks of Note [Solving order].
#pragma once

#include <vector>

#include "manifest/plan_internal.hpp"
#include "tileops/manifest/signature_call.hpp"

namespace tileops::manifest::detail {

// Axis positions of every shape term of one call, inline for ordinary entries.
class CallScratch {
 public:
  explicit CallScratch(const PlanData& d) {
    if (d.total_terms > kInlineTerms) heap_.resize(d.total_terms);
  }
  std::int64_t* pos() noexcept { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  std::int64_t inline_[kInlineTerms];
  std::vector<std::int64_t> heap_;
};

inline int slot_tensor(const PlanData& d, int slot) { return d.slot_tensor[slot]; }

// Runs `s` over `frame`; `records` holds the shape and dtype of every present tensor. Throws
// CheckError "<Op>: ..." at the first failing check.
// `memos` (a call record's, or null at construction) memoises the schedule's rules and lets (Note
// [Memoised programs] in plan_exec.cpp).
void run_schedule(const PlanData& d, const Schedule& s, std::vector<Value>& frame,
                  const std::vector<TensorRecord>& records, CallScratch& scratch,
                  ProgramMemo* memos = nullptr);

// Names a declaration in an error message; the text is built only when an error is raised, so
// the call path formats nothing.
struct Where {
  std::string_view name;   // a tensor or let name, or empty
  std::string_view field;  // "shape", "dtype", "shape_rules[", ...
  int index = -1;          // a rule's index, when the field is indexed
  std::string str() const;
};

// Evaluates `p`, turning an evaluation failure into CheckError "<Op>: <where>: <what>".
Value eval_checked(const PlanData& d, const expr::Program& p, const std::vector<Value>& frame,
                   const Where& where);

// eval_checked through `memo` (Note [Memoised programs] in plan_exec.cpp): the memoised result
// when the slots `p` reads hold what they held when it was computed. Without a memo, evaluates
// into `scratch`.
const Value& eval_memoised(const PlanData& d, const expr::Program& p,
                           const std::vector<Value>& frame, ProgramMemo* memo, Value& scratch,
                           const Where& where);

// The value of a term: read straight from the frame when the term is a bare name (`direct` is its
// slot), else evaluated into `scratch`.
inline const Value& operand(const PlanData& d, const expr::Program& p, int direct,
                            const std::vector<Value>& frame, Value& scratch, const Where& where) {
  if (direct >= 0) return frame[direct];
  scratch = eval_checked(d, p, frame, where);
  return scratch;
}

}  // namespace tileops::manifest::detail
