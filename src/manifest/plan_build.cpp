// Compiling an entry into a SignaturePlan: the scope, every expression, and the solving order of
// each presence point (Note [Solving order]).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "manifest/plan_internal.hpp"
#include "tileops/core/error.hpp"

namespace tileops::manifest {
namespace detail {
namespace {

expr::Type param_expr_type(const ParamType& t) {
  expr::Kind k = expr::Kind::kAny;
  switch (t.kind) {
    case ParamKind::kInt:
      k = expr::Kind::kInt;
      break;
    case ParamKind::kFloat:
      k = expr::Kind::kFloat;
      break;
    // An `int | float` param holds either at run time: it has no static kind, so category() and
    // comparisons read the value it holds.
    case ParamKind::kNumber:
      k = expr::Kind::kAny;
      break;
    case ParamKind::kBool:
      k = expr::Kind::kBool;
      break;
    case ParamKind::kStr:
    case ParamKind::kEnum:
      k = expr::Kind::kStr;
      break;
    case ParamKind::kIntList:
      k = expr::Kind::kIntSeq;
      break;
    case ParamKind::kFloatList:
      k = expr::Kind::kFloatSeq;
      break;
    case ParamKind::kDType:
      k = expr::Kind::kDType;
      break;
  }
  return {k, t.optional};
}

expr::Type index_expr_type(IndexKind k) {
  switch (k) {
    case IndexKind::kDim:
      return {expr::Kind::kInt, false};
    case IndexKind::kShape:
    case IndexKind::kSeqInt:
      return {expr::Kind::kIntSeq, false};
    case IndexKind::kDType:
      return {expr::Kind::kDType, false};
  }
  return {};
}

[[noreturn]] void fail_at(const Origin& o, int column, const std::string& what,
                          const std::string& source) {
  throw ManifestError(fmt::format("{}:{}:{}: {}: {}: {} in \"{}\"", o.file, o.line,
                                  o.column + std::max(column, 1) - 1, o.entry, o.field, what,
                                  source));
}

// At the line and column of the declaration `at`.
[[noreturn]] void fail(const Origin& at, const std::string& field, const std::string& what) {
  throw ManifestError(
      fmt::format("{}:{}:{}: {}: {}: {}", at.file, at.line, at.column, at.entry, field, what));
}

// An error about a whole section of the entry (`field` is signature, signature.params or
// signature.inputs), at the key that opens the section; an entry not read from a file has none.
[[noreturn]] void fail(const Entry& e, const std::string& field, const std::string& what) {
  const EntryOrigins& o = e.origins;
  const Origin& at = field == "signature.params"   ? o.params
                     : field == "signature.inputs" ? o.inputs
                                                   : o.signature;
  if (at.line == 0) throw ManifestError(fmt::format("{}: {}: {}: {}", e.file, e.name, field, what));
  fail(at, field, what);
}

// Compiles one expression, requiring `want` (kAny: anything), turning errors into diagnostics.
expr::Program compile_at(const Expr& ex, const expr::Scope& scope, expr::Kind want,
                         const char* want_text, bool allow_bytes = false) {
  expr::Program p;
  try {
    p = expr::compile(*ex.ast, ex.source, scope, {allow_bytes});
  } catch (const expr::ExprError& err) {
    fail_at(ex.origin, err.column(), err.detail(), ex.source);
  }
  if (want != expr::Kind::kAny && (p.type().kind != want || p.type().optional) &&
      !(want == expr::Kind::kFloat && p.type().kind == expr::Kind::kInt)) {
    fail_at(ex.origin, 1, fmt::format("expected {}, got {}", want_text, expr::type_name(p.type())),
            ex.source);
  }
  return p;
}

// Lets in dependency order; a cycle is a manifest error.
std::vector<int> order_lets(const Entry& e) {
  std::vector<int> order, state(e.lets.size(), 0);
  std::function<void(int)> visit = [&](int i) {
    if (state[i] == 2) return;
    if (state[i] == 1)
      fail(e.lets[i].expr.origin, "signature.let." + e.lets[i].name,
           "lets form a cycle through '" + e.lets[i].name + "'");
    state[i] = 1;
    for (const std::string& n : expr::free_names(*e.lets[i].expr.ast)) {
      for (std::size_t j = 0; j < e.lets.size(); ++j)
        if (e.lets[j].name == n) visit(static_cast<int>(j));
    }
    state[i] = 2;
    order.push_back(i);
  };
  for (std::size_t i = 0; i < e.lets.size(); ++i) visit(static_cast<int>(i));
  return order;
}

// Note [Solving order]: which slots are known depends only on which tensors a call passes, never
// on their values, so the order in which a call binds and checks is fixed per presence point
// here, once. An input axis term is a bind when it is a lone unknown name, an affine solve when
// it is `a * M + e` (or `M + e`, `a * M - e`, ...) with one unknown M, a positive literal a and a
// known e, and a check when every name in it is known. A shape takes at most one unknown splice;
// the other splices' lengths are read at run time.
struct Affine {
  std::string name;
  std::int64_t coeff = 1;
  const expr::Ast* e = nullptr;
  int sign = 1;
};

std::optional<Affine> scaled_name(const expr::Ast& a) {
  if (a.op == expr::AstOp::kName) return Affine{a.text, 1, nullptr, 1};
  if (a.op == expr::AstOp::kMul && a.args.size() == 2) {
    const expr::Ast& l = *a.args[0];
    const expr::Ast& r = *a.args[1];
    if (l.op == expr::AstOp::kIntLit && l.int_value > 0 && r.op == expr::AstOp::kName)
      return Affine{r.text, l.int_value, nullptr, 1};
    if (r.op == expr::AstOp::kIntLit && r.int_value > 0 && l.op == expr::AstOp::kName)
      return Affine{l.text, r.int_value, nullptr, 1};
  }
  return std::nullopt;
}

std::optional<Affine> match_affine(const expr::Ast& a) {
  if (auto s = scaled_name(a)) return s;
  if ((a.op == expr::AstOp::kAdd || a.op == expr::AstOp::kSub) && a.args.size() == 2) {
    if (auto s = scaled_name(*a.args[0])) {
      s->e = a.args[1].get();
      s->sign = a.op == expr::AstOp::kAdd ? 1 : -1;
      return s;
    }
    if (a.op == expr::AstOp::kAdd) {
      if (auto s = scaled_name(*a.args[1])) {
        s->e = a.args[0].get();
        return s;
      }
    }
  }
  return std::nullopt;
}

// The slots a call schedule writes: its binds and lets, and the tensor slots it fills.
std::vector<bool> written_slots(const PlanData& d, const Schedule& s) {
  std::vector<bool> written(d.scope.num_slots(), false);
  for (const Step& step : s.steps) {
    const bool writes = step.kind == Step::Kind::kDTypeBind || step.kind == Step::Kind::kBind ||
                        step.kind == Step::Kind::kAffine || step.kind == Step::Kind::kLet ||
                        (step.kind == Step::Kind::kAlign && step.slot >= 0);
    if (writes) written[step.slot] = true;
  }
  for (int slot : s.fill_tensor_slots) written[slot] = true;
  return written;
}

// Schedule::reset_slots of every call schedule (Note [Record reuse]).
void note_reset_slots(PlanData& d) {
  std::vector<std::vector<bool>> written;
  std::vector<bool> any(d.scope.num_slots(), false);
  for (const Schedule& s : d.calls) {
    written.push_back(written_slots(d, s));
    for (int slot = 0; slot < d.scope.num_slots(); ++slot)
      any[slot] = any[slot] || written.back()[slot];
  }
  for (std::size_t k = 0; k < d.calls.size(); ++k)
    for (int slot = 0; slot < d.scope.num_slots(); ++slot)
      if (any[slot] && !written[k][slot]) d.calls[k].reset_slots.push_back(slot);
}

class Scheduler {
 public:
  Scheduler(PlanData& d, std::vector<bool> known) : d_(d), known_(std::move(known)) {}

  // Orders the steps for `tensors`, then every let and rule in `lets`/`rules` that becomes
  // decidable. Returns the lets and rules left undecided.
  Schedule run(const std::vector<int>& tensors, std::vector<int>& lets, std::vector<int>& rules) {
    Schedule s;
    s.tensors = tensors;
    struct TensorState {
      bool dtype_done = false;
      bool aligned = false;
      std::vector<bool> term_done;
    };
    std::vector<TensorState> st(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const PlanTensor& t = d_.tensors[tensors[i]];
      st[i].term_done.assign(t.axes.size(), false);
      for (std::size_t k = 0; k < t.axes.size(); ++k)
        st[i].term_done[k] = t.decl->shape.axes[k].splice;
    }
    bool progress = true;
    while (progress) {
      progress = false;
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        int ti = tensors[i];
        const PlanTensor& t = d_.tensors[ti];
        if (!st[i].dtype_done) {
          if (t.dtype_at_call) {
            s.steps.push_back({Step::Kind::kDTypeAllowed, ti, -1, t.dtype_index_slot});
            st[i].dtype_done = progress = true;
          } else if (t.dtype_index_slot >= 0 && !known_[t.dtype_index_slot]) {
            s.steps.push_back({Step::Kind::kDTypeBind, ti, -1, t.dtype_index_slot});
            known_[t.dtype_index_slot] = true;
            st[i].dtype_done = progress = true;
          } else if (reads_known(t.dtype)) {
            Step step{Step::Kind::kDTypeCheck, ti};
            step.prog = &t.dtype;
            s.steps.push_back(step);
            note_reads(s, t.dtype);
            st[i].dtype_done = progress = true;
          }
        }
        if (!st[i].aligned && try_align(s, ti)) st[i].aligned = progress = true;
        if (!st[i].aligned) continue;
        for (std::size_t k = 0; k < t.axes.size(); ++k) {
          if (st[i].term_done[k]) continue;
          if (try_axis(s, ti, static_cast<int>(k))) st[i].term_done[k] = progress = true;
        }
      }
      for (auto it = lets.begin(); it != lets.end();) {
        const expr::Program& p = d_.lets[*it];
        if (reads_known(p)) {
          Step step{Step::Kind::kLet, -1, -1, d_.let_slots[*it]};
          step.prog = &p;
          step.index = *it;
          s.steps.push_back(step);
          note_reads(s, p);
          known_[d_.let_slots[*it]] = true;
          it = lets.erase(it);
          progress = true;
        } else {
          ++it;
        }
      }
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const PlanTensor& t = d_.tensors[tensors[i]];
      if (!st[i].dtype_done)
        return unsolved(s, fmt::format("{}.dtype '{}' reads an index no input solves", t.decl->name,
                                       t.decl->dtype.source));
      if (!st[i].aligned)
        return unsolved(s, fmt::format("{}.shape {} has more than one splice no input solves",
                                       t.decl->name, t.decl->shape.source));
      for (std::size_t k = 0; k < t.axes.size(); ++k)
        if (!st[i].term_done[k])
          return unsolved(s, fmt::format("{}.shape axis '{}' cannot be solved: it needs one "
                                         "unknown name M in the form a * M + e",
                                         t.decl->name, t.decl->shape.axes[k].expr.source));
    }
    for (auto it = rules.begin(); it != rules.end();) {
      const expr::Program& p = d_.rules[*it];
      if (reads_known(p)) {
        Step step{Step::Kind::kRule};
        step.prog = &p;
        step.index = *it;
        s.steps.push_back(step);
        note_reads(s, p);
        it = rules.erase(it);
      } else {
        ++it;
      }
    }
    return s;
  }

  const std::vector<bool>& known() const { return known_; }
  bool reads_known(const expr::Program& p) const {
    for (int slot : p.reads())
      if (!known_[slot]) return false;
    return true;
  }
  std::string first_unknown(const expr::Program& p) const {
    for (int slot : p.reads())
      if (!known_[slot]) return d_.scope.entries()[slot].name;
    return {};
  }
  void note_reads(Schedule& s, const expr::Program& p) const {
    for (int slot : p.reads()) {
      if (d_.scope.entries()[slot].role == expr::NameRole::kTensor &&
          std::find(s.fill_tensor_slots.begin(), s.fill_tensor_slots.end(), slot) ==
              s.fill_tensor_slots.end())
        s.fill_tensor_slots.push_back(slot);
    }
  }

 private:
  Schedule& unsolved(Schedule& s, std::string why) {
    s.solvable = false;
    s.unsolved = std::move(why);
    return s;
  }

  int slot_of(const std::string& name) const {
    const expr::Scope::Entry* e = d_.scope.find(name);
    return e ? e->slot : -1;
  }

  bool try_align(Schedule& s, int ti) {
    const PlanTensor& t = d_.tensors[ti];
    int unknown_term = -1;
    for (std::size_t k = 0; k < t.axes.size(); ++k) {
      if (!t.decl->shape.axes[k].splice || reads_known(t.axes[k])) continue;
      const expr::Ast& a = *t.decl->shape.axes[k].expr.ast;
      if (a.op != expr::AstOp::kName || unknown_term >= 0) return false;
      unknown_term = static_cast<int>(k);
    }
    Step step{Step::Kind::kAlign, ti, unknown_term};
    if (unknown_term >= 0) {
      step.slot = slot_of(t.decl->shape.axes[unknown_term].expr.ast->text);
      known_[step.slot] = true;
    }
    for (std::size_t k = 0; k < t.axes.size(); ++k)
      if (t.decl->shape.axes[k].splice && static_cast<int>(k) != unknown_term)
        note_reads(s, t.axes[k]);
    s.steps.push_back(step);
    return true;
  }

  bool try_axis(Schedule& s, int ti, int k) {
    const PlanTensor& t = d_.tensors[ti];
    const expr::Program& p = t.axes[k];
    if (reads_known(p)) {
      Step step{Step::Kind::kAxisCheck, ti, k};
      step.prog = &p;
      note_reads(s, p);
      s.steps.push_back(step);
      return true;
    }
    auto aff = match_affine(*t.decl->shape.axes[k].expr.ast);
    if (!aff) return false;
    int slot = slot_of(aff->name);
    if (slot < 0 || known_[slot] || d_.scope.entries()[slot].type.kind != expr::Kind::kInt)
      return false;
    Step step{aff->coeff == 1 && !aff->e ? Step::Kind::kBind : Step::Kind::kAffine, ti, k, slot};
    step.coeff = aff->coeff;
    step.sign = aff->sign;
    if (aff->e) {
      auto& progs = d_.affine_programs;
      std::string src = expr::unparse(*aff->e);
      progs.push_back(std::make_unique<expr::Program>(expr::compile(*aff->e, src, d_.scope)));
      if (!reads_known(*progs.back())) {
        progs.pop_back();
        return false;
      }
      step.prog = progs.back().get();
      note_reads(s, *step.prog);
      if (step.prog->type().kind != expr::Kind::kInt) return false;
    }
    known_[slot] = true;
    s.steps.push_back(step);
    return true;
  }

  PlanData& d_;
  std::vector<bool> known_;
};

}  // namespace

}  // namespace detail

using detail::PlanData;
using detail::PlanTensor;

std::shared_ptr<const SignaturePlan> SignaturePlan::build(std::shared_ptr<const Entry> entry_ptr) {
  const Entry& e = *entry_ptr;
  auto plan = std::shared_ptr<SignaturePlan>(new SignaturePlan());
  plan->data_ = std::make_unique<PlanData>();
  PlanData& d = *plan->data_;
  d.entry = entry_ptr;
  d.op_name = e.name;
  d.family = e.family;
  d.stem = operator_stem(e.family, e.name);

  // Names: indices, params, tensors, out; then lets as they compile.
  std::set<std::string> names;
  auto claim = [&](const std::string& n, const Origin& o) {
    if (n == "out" || !names.insert(n).second)
      throw ManifestError(
          fmt::format("{}: the name '{}' is declared twice (indices, params, lets and tensors "
                      "share one namespace; 'out' is reserved)",
                      o.str(), n));
  };
  for (const IndexDecl& i : e.forall) {
    claim(i.name, i.origin);
    d.index_slots.push_back(
        d.scope.declare(i.name, detail::index_expr_type(i.kind), expr::NameRole::kIndex));
  }
  for (const ParamDecl& p : e.params) {
    claim(p.name, p.origin);
    if (p.tensor) {
      d.param_slots.push_back(d.scope.declare(p.name, {expr::Kind::kTensor, p.tensor->optional},
                                              expr::NameRole::kTensor));
      PlanTensor t;
      t.decl = &*p.tensor;
      t.role = PlanTensor::Role::kCtor;
      t.role_index = d.num_ctor++;
      t.slot = d.param_slots.back();
      d.tensors.push_back(std::move(t));
    } else {
      d.param_slots.push_back(
          d.scope.declare(p.name, detail::param_expr_type(p.type), expr::NameRole::kParam));
    }
  }
  for (const TensorDecl& t : e.inputs) {
    claim(t.name, t.origin);
    PlanTensor pt;
    pt.decl = &t;
    pt.role = PlanTensor::Role::kInput;
    pt.role_index = d.num_inputs++;
    pt.slot = d.scope.declare(t.name, {expr::Kind::kTensor, t.optional}, expr::NameRole::kTensor);
    if (t.optional) {
      pt.optional_bit = static_cast<int>(d.optional_inputs.size());
      d.optional_inputs.push_back(pt.role_index);
    }
    d.tensors.push_back(std::move(pt));
  }
  for (const TensorDecl& t : e.outputs) {
    claim(t.name, t.origin);
    PlanTensor pt;
    pt.decl = &t;
    pt.role = PlanTensor::Role::kOutput;
    pt.role_index = d.num_outputs++;
    pt.slot = d.scope.declare(t.name, {expr::Kind::kTensor, false}, expr::NameRole::kTensor);
    if (t.buffer_out) {
      if (d.buffer_output >= 0)
        detail::fail(t.origin, "signature.outputs." + t.name + ".buffer",
                     "at most one output declares buffer: out");
      d.buffer_output = pt.role_index;
    }
    d.tensors.push_back(std::move(pt));
  }
  d.out_slot = d.scope.declare("out", {expr::Kind::kTensor, true}, expr::NameRole::kTensor);
  d.slot_tensor.assign(d.scope.num_slots(), -1);
  for (std::size_t i = 0; i < d.tensors.size(); ++i)
    d.slot_tensor[d.tensors[i].slot] = static_cast<int>(i);
  d.out_bit = static_cast<int>(d.optional_inputs.size());
  if (d.out_bit > 12) detail::fail(e, "signature.inputs", "more than 12 optional inputs");

  d.lets.resize(e.lets.size());
  d.let_slots.assign(e.lets.size(), -1);
  for (const LetDecl& l : e.lets) claim(l.name, l.expr.origin);
  d.let_order = detail::order_lets(e);
  for (int i : d.let_order) {
    d.lets[i] = detail::compile_at(e.lets[i].expr, d.scope, expr::Kind::kAny, "a value");
    d.let_slots[i] = d.scope.declare(e.lets[i].name, d.lets[i].type(), expr::NameRole::kLet);
  }

  d.slot_index.assign(d.scope.num_slots(), nullptr);
  d.slot_tensor.resize(d.scope.num_slots(), -1);
  for (std::size_t i = 0; i < e.forall.size(); ++i) d.slot_index[d.index_slots[i]] = &e.forall[i];

  // Tensors: dtype and axis programs, term offsets.
  for (PlanTensor& t : d.tensors) {
    t.dtype = detail::compile_at(t.decl->dtype, d.scope, expr::Kind::kDType, "a dtype");
    const expr::Ast& da = *t.decl->dtype.ast;
    if (da.op == expr::AstOp::kName) {
      if (const IndexDecl* idx = e.find_index(da.text); idx && idx->kind == IndexKind::kDType)
        t.dtype_index_slot = d.scope.find(da.text)->slot;
    }
    if (da.op == expr::AstOp::kName && d.scope.find(da.text))
      t.dtype_direct = d.scope.find(da.text)->slot;
    t.term_offset = d.total_terms;
    for (const AxisTerm& a : t.decl->shape.axes) {
      const expr::Ast& aa = *a.expr.ast;
      const expr::Scope::Entry* named =
          aa.op == expr::AstOp::kName ? d.scope.find(aa.text) : nullptr;
      t.axis_direct.push_back(named && !named->type.optional ? named->slot : -1);
      t.axes.push_back(a.splice
                           ? detail::compile_at(a.expr, d.scope, expr::Kind::kIntSeq,
                                                "a sequence of ints to splice")
                           : detail::compile_at(a.expr, d.scope, expr::Kind::kInt, "an int axis"));
    }
    d.total_terms += static_cast<int>(t.axes.size());
  }
  for (const Expr& r : e.shape_rules)
    d.rules.push_back(detail::compile_at(r, d.scope, expr::Kind::kBool, "a bool"));
  d.mutated_when.resize(e.inputs.size());
  for (std::size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorDecl& t = e.inputs[i];
    if (t.mutated_when)
      d.mutated_when[i] = detail::compile_at(*t.mutated_when, d.scope, expr::Kind::kBool, "a bool");
    if (t.write_only && !t.may_be_written())
      detail::fail(t.origin, "signature.inputs." + t.name + ".write_only",
                   "write_only needs mutated");
  }
  for (const TensorDecl& o : e.outputs) {
    if (o.alias.empty()) continue;
    const TensorDecl* in = e.find_input(o.alias);
    if (!in || !in->may_be_written())
      detail::fail(o.origin, "signature.outputs." + o.name + ".alias",
                   fmt::format("'{}' is not a written input", o.alias));
    if (o.buffer_out)
      detail::fail(o.origin, "signature.outputs." + o.name,
                   "an output is either an alias or the out buffer, not both");
  }
  if (e.roofline.flops.ast)
    d.flops = detail::compile_at(e.roofline.flops, d.scope, expr::Kind::kInt, "an int", true);
  if (e.roofline.bytes && e.roofline.bytes->ast)
    d.bytes = detail::compile_at(*e.roofline.bytes, d.scope, expr::Kind::kInt, "an int", true);

  // Discriminant params: bool, enum and optional values fix a construction point.
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const ParamDecl& p = e.params[i];
    if (p.tensor || p.type.optional || p.type.kind == ParamKind::kBool ||
        p.type.kind == ParamKind::kEnum)
      d.discriminant_params.push_back(static_cast<int>(i));
  }

  // Note [Ctor tensor dtypes]: a construction-time tensor whose dtype is a DType index that a
  // required input also carries takes its dtype from the call: construction checks it against
  // the index's set only, the call's input binds the index, and the op casts the tensor to it
  // (docs/seeds.md, class-structure Table 2, running group). Any other ctor tensor dtype index is
  // fixed
  // at construction, and the call's tensors must match it.
  for (std::size_t ti = 0; ti < d.tensors.size(); ++ti) {
    PlanTensor& t = d.tensors[ti];
    if (t.role != PlanTensor::Role::kCtor || t.dtype_index_slot < 0) continue;
    for (int i = 0; i < d.num_inputs; ++i)
      if (d.input(i).optional_bit < 0 && d.input(i).dtype_index_slot == t.dtype_index_slot)
        t.dtype_at_call = true;
    if (t.dtype_at_call) d.ctor_dtype_at_call.push_back(static_cast<int>(ti));
  }

  // Every rule, let and computed output axis term has a memo slot (Note [Memoised programs]).
  d.let_memo_base = static_cast<int>(d.rules.size());
  d.num_memos = d.let_memo_base + static_cast<int>(d.lets.size());
  for (int o = 0; o < d.num_outputs; ++o) {
    PlanTensor& t = d.tensors[d.num_ctor + d.num_inputs + o];
    t.axis_memo.assign(t.axes.size(), -1);
    for (std::size_t k = 0; k < t.axes.size(); ++k)
      if (t.axis_direct[k] < 0) t.axis_memo[k] = d.num_memos++;
  }

  // Construction: params and tensor slots are known; ctor tensors unify; lets and rules that
  // become decidable run at construction.
  std::vector<bool> known(d.scope.num_slots(), false);
  for (int s : d.param_slots) known[s] = true;
  for (const auto& entry_slot : d.scope.entries())
    if (entry_slot.role == expr::NameRole::kTensor) known[entry_slot.slot] = true;
  std::vector<int> ctor_tensors, call_lets(d.let_order.begin(), d.let_order.end()), call_rules;
  for (int i = 0; i < d.num_ctor; ++i) ctor_tensors.push_back(i);
  for (std::size_t i = 0; i < d.rules.size(); ++i) call_rules.push_back(static_cast<int>(i));
  {
    detail::Scheduler sched(d, known);
    d.construction = sched.run(ctor_tensors, call_lets, call_rules);
    if (!d.construction.solvable) detail::fail(e, "signature.params", d.construction.unsolved);
    d.known_at_construction = sched.known();
  }

  // Calls: one schedule per presence mask of the optional inputs.
  std::size_t masks = std::size_t{1} << d.optional_inputs.size();
  d.calls.resize(masks);
  for (std::size_t mask = 0; mask < masks; ++mask) {
    std::vector<int> tensors;
    for (int i = 0; i < d.num_inputs; ++i) {
      const PlanTensor& t = d.input(i);
      if (t.optional_bit < 0 || ((mask >> t.optional_bit) & 1u)) tensors.push_back(d.num_ctor + i);
    }
    std::vector<int> lets = call_lets, rules = call_rules;
    detail::Scheduler sched(d, d.known_at_construction);
    detail::Schedule s = sched.run(tensors, lets, rules);
    if (s.solvable && !lets.empty()) {
      s.solvable = false;
      s.unsolved = fmt::format("let '{}' reads '{}', which no input solves", e.lets[lets[0]].name,
                               sched.first_unknown(d.lets[lets[0]]));
    }
    if (s.solvable && !rules.empty()) {
      s.solvable = false;
      s.unsolved = fmt::format("shape_rules[{}] reads '{}', which no input solves", rules[0],
                               sched.first_unknown(d.rules[rules[0]]));
    }
    for (int o = 0; s.solvable && o < d.num_outputs; ++o) {
      const PlanTensor& t = d.output(o);
      auto check = [&](const expr::Program& p, const std::string& what) {
        if (s.solvable && !sched.reads_known(p)) {
          s.solvable = false;
          s.unsolved = fmt::format("output {}'s {} reads '{}', which no input solves", t.decl->name,
                                   what, sched.first_unknown(p));
        }
        sched.note_reads(s, p);
      };
      check(t.dtype, "dtype");
      for (const expr::Program& p : t.axes) check(p, "shape");
    }
    if (s.solvable && d.flops && !sched.reads_known(*d.flops)) {
      s.solvable = false;
      s.unsolved = fmt::format("roofline.flops reads '{}', which no input solves",
                               sched.first_unknown(*d.flops));
    }
    if (s.solvable && d.bytes && !sched.reads_known(*d.bytes)) {
      s.solvable = false;
      s.unsolved = fmt::format("roofline.bytes reads '{}', which no input solves",
                               sched.first_unknown(*d.bytes));
    }
    if (!s.solvable) {
      std::string present;
      for (int i : tensors) present += (present.empty() ? "" : ", ") + d.tensors[i].decl->name;
      detail::fail(
          e, "signature",
          fmt::format("no inference plan when the call passes [{}]: {}", present, s.unsolved));
    }
    d.calls[mask] = std::move(s);
  }
  detail::note_reset_slots(d);
  return plan;
}

SignaturePlan::~SignaturePlan() = default;

const Entry& SignaturePlan::entry() const noexcept { return *data_->entry; }
const std::string& SignaturePlan::op_name() const noexcept { return data_->op_name; }

}  // namespace tileops::manifest
