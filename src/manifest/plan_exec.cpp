#include "manifest/plan_exec.hpp"

#include <fmt/format.h>

#include "tileops/core/error.hpp"

namespace tileops::manifest::detail {
namespace {

std::string dtype_list(const std::vector<DType>& ds) {
  std::string s;
  for (DType dt : ds) s += (s.empty() ? "" : ", ") + std::string(dtype_name(dt));
  return "[" + s + "]";
}

[[noreturn]] void fail(const PlanData& d, const std::string& what) {
  throw CheckError(fmt::format("{}: {}", d.op_name, what));
}

void align(const PlanData& d, const Step& step, std::vector<Value>& frame, const TensorRecord& rec,
           std::int64_t* pos) {
  const PlanTensor& t = d.tensors[step.tensor];
  const std::string& name = t.decl->name;
  const std::size_t rank = rec.shape.size();
  const std::size_t terms = t.axes.size();
  // The known splices' values: read in place from the frame for bare names (no copy), evaluated
  // into scratch otherwise.
  constexpr std::size_t kInline = 8;
  const Value* known_inline[kInline];
  std::vector<const Value*> known_heap;
  const Value** known = known_inline;
  if (terms > kInline) {
    known_heap.resize(terms);
    known = known_heap.data();
  }
  std::vector<Value> scratch;  // only for splices that are not bare names
  const Where where{name, "shape"};
  std::size_t fixed = 0;
  for (std::size_t k = 0; k < terms; ++k) {
    if (!t.decl->shape.axes[k].splice) {
      ++fixed;
    } else if (static_cast<int>(k) != step.term) {
      if (t.axis_direct[k] >= 0) {
        known[k] = &frame[t.axis_direct[k]];
      } else {
        if (scratch.empty()) scratch.reserve(terms);  // stable addresses
        scratch.push_back(eval_checked(d, t.axes[k], frame, where));
        known[k] = &scratch.back();
      }
      fixed += known[k]->as_int_list().size();
    }
  }
  std::size_t unknown_len = 0;
  if (step.term >= 0) {
    if (rank < fixed) fail(d, fmt::format("{} needs rank >= {}; got rank {}", name, fixed, rank));
    unknown_len = rank - fixed;
  } else if (rank != fixed) {
    fail(d, fmt::format("{} needs rank == {}; got rank {}", name, fixed, rank));
  }
  std::size_t p = 0;
  for (std::size_t k = 0; k < terms; ++k) {
    const AxisTerm& term = t.decl->shape.axes[k];
    if (!term.splice) {
      pos[t.term_offset + k] = static_cast<std::int64_t>(p++);
    } else if (static_cast<int>(k) == step.term) {
      frame[step.slot] =
          Value(Shape(std::span<const std::int64_t>(rec.shape.data() + p, unknown_len)));
      p += unknown_len;
    } else {
      const Shape& want = known[k]->as_int_list();
      for (std::size_t j = 0; j < want.size(); ++j) {
        if (rec.shape[p + j] != want[j]) {
          Shape got(std::span<const std::int64_t>(rec.shape.data() + p, want.size()));
          fail(d, fmt::format("{} shape does not match *{}: axes {}..{} of {} are {}, expected {}",
                              name, term.expr.source, p, p + want.size() - 1, rec.shape.str(),
                              got.str(), want.str()));
        }
      }
      p += want.size();
    }
  }
}

}  // namespace

std::string Where::str() const {
  std::string s;
  if (!name.empty()) s = std::string(name) + (field.empty() ? "" : ".");
  s += field;
  if (index >= 0) s += fmt::format("[{}]", index);
  return s;
}

Value eval_checked(const PlanData& d, const expr::Program& p, const std::vector<Value>& frame,
                   const Where& where) {
  try {
    return p.eval(frame);
  } catch (const CheckError&) {
    throw;
  } catch (const Error& err) {
    throw CheckError(fmt::format("{}: {}: {}", d.op_name, where.str(), err.what()));
  }
}

// Note [Memoised programs]
// Rules, lets and output axis terms are pure functions of the slots they read (expr::Program::
// reads), and a serving process calls an op with the same few shapes over and over, so
// interpreting them again each call is most of the signature check (Add's two dtype rules were a
// quarter of its call, Amax's three shape rules nearly half). A call record keeps, per program,
// the values of the slots it read and the result; a later check in the same record (records are
// recycled, Note [Record reuse] in signature_call.hpp) compares those slots and takes the result
// when each holds the same value of the same kind, which costs a few comparisons instead of an
// interpretation. The kind is compared too because Value's equality is Python's (1 == 1.0) while
// a rule may read a value's category. A failing evaluation leaves the memo invalid, so a call that
// fails fails again the same way. A record is used by one call at a time, so no lock is needed.
namespace {

bool same_reads(const ProgramMemo& memo, const std::vector<int>& reads,
                const std::vector<Value>& frame) {
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const Value& now = frame[reads[i]];
    const Value& then = memo.reads[i];
    if (now.kind() != then.kind() || !(now == then)) return false;
  }
  return true;
}

}  // namespace

const Value& eval_memoised(const PlanData& d, const expr::Program& p,
                           const std::vector<Value>& frame, ProgramMemo* memo, Value& scratch,
                           const Where& where) {
  if (memo == nullptr) {
    scratch = eval_checked(d, p, frame, where);
    return scratch;
  }
  const std::vector<int>& reads = p.reads();
  if (memo->valid && same_reads(*memo, reads, frame)) return memo->result;
  memo->valid = false;
  memo->result = eval_checked(d, p, frame, where);
  memo->reads.resize(reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) memo->reads[i] = frame[reads[i]];
  memo->valid = true;
  return memo->result;
}

void run_schedule(const PlanData& d, const Schedule& s, std::vector<Value>& frame,
                  const std::vector<TensorRecord>& records, CallScratch& scratch,
                  ProgramMemo* memos) {
  Value evaluated;  // a rule's or let's value when there is no memo
  std::int64_t* pos = scratch.pos();
  for (const Step& step : s.steps) {
    // An optional construction-time tensor left out binds and checks nothing (a call schedule's
    // inputs are always present: each presence point has its own schedule).
    if (step.tensor >= 0 && !records[step.tensor].present) continue;
    switch (step.kind) {
      case Step::Kind::kDTypeBind:
      case Step::Kind::kDTypeAllowed: {
        const PlanTensor& t = d.tensors[step.tensor];
        DType dt = records[step.tensor].dtype;
        const IndexDecl& idx = *d.slot_index[step.slot];
        bool allowed = false;
        for (DType a : idx.dtypes) allowed = allowed || a == dt;
        if (!allowed)
          fail(d, fmt::format("{} dtype is outside {}; got {}", t.decl->name,
                              dtype_list(idx.dtypes), dtype_name(dt)));
        if (step.kind == Step::Kind::kDTypeBind) frame[step.slot] = Value(dt);
        break;
      }
      case Step::Kind::kDTypeCheck: {
        const PlanTensor& t = d.tensors[step.tensor];
        DType dt = records[step.tensor].dtype;
        Value value;
        DType want = operand(d, *step.prog, t.dtype_direct, frame, value, {t.decl->name, "dtype"})
                         .as_dtype();
        if (dt != want) {
          if (t.dtype_index_slot >= 0)
            fail(d, fmt::format("{} dtype differs from {} ({}); got {}", t.decl->name,
                                t.decl->dtype.source, dtype_name(want), dtype_name(dt)));
          // The value is spelled out only when the declaration is an expression, not a dtype name.
          const std::string& src = t.decl->dtype.source;
          std::string decl =
              src == dtype_name(want) ? src : fmt::format("{} ({})", src, dtype_name(want));
          fail(d, fmt::format("{} dtype is not {}; got {}", t.decl->name, decl, dtype_name(dt)));
        }
        break;
      }
      case Step::Kind::kAlign:
        align(d, step, frame, records[step.tensor], pos);
        break;
      case Step::Kind::kBind: {
        const PlanTensor& t = d.tensors[step.tensor];
        frame[step.slot] = Value(records[step.tensor].shape[pos[t.term_offset + step.term]]);
        break;
      }
      case Step::Kind::kAffine: {
        const PlanTensor& t = d.tensors[step.tensor];
        std::int64_t axis = pos[t.term_offset + step.term];
        std::int64_t size = records[step.tensor].shape[axis];
        std::int64_t e =
            step.prog ? eval_checked(d, *step.prog, frame, {t.decl->name, "shape"}).as_int() : 0;
        std::int64_t num = size - step.sign * e;
        if (num < 0 || num % step.coeff != 0)
          fail(d, fmt::format("{} axis {} is not {}; got {}", t.decl->name, axis,
                              t.decl->shape.axes[step.term].expr.source, size));
        frame[step.slot] = Value(num / step.coeff);
        break;
      }
      case Step::Kind::kAxisCheck: {
        const PlanTensor& t = d.tensors[step.tensor];
        std::int64_t axis = pos[t.term_offset + step.term];
        std::int64_t size = records[step.tensor].shape[axis];
        Value value;
        std::int64_t want =
            operand(d, *step.prog, t.axis_direct[step.term], frame, value, {t.decl->name, "shape"})
                .as_int();
        if (size != want)
          fail(d,
               fmt::format("{} shape does not match {}: axis {} is {}, expected {}", t.decl->name,
                           t.decl->shape.axes[step.term].expr.source, axis, size, want));
        break;
      }
      case Step::Kind::kLet:
        frame[step.slot] = eval_memoised(
            d, *step.prog, frame, memos ? &memos[d.let_memo_base + step.index] : nullptr, evaluated,
            {"signature.let", d.entry->lets[step.index].name});
        break;
      case Step::Kind::kRule: {
        const Where where{"", "shape_rules", step.index};
        if (!eval_memoised(d, *step.prog, frame, memos ? &memos[step.index] : nullptr, evaluated,
                           where)
                 .as_bool())
          fail(d, fmt::format("{}: {}", where.str(), d.entry->shape_rules[step.index].source));
        break;
      }
    }
  }
}

}  // namespace tileops::manifest::detail
