// Names, literals and operators of the kind checker; Scope; compile().

#include "manifest/expr/compiler.hpp"

#include <algorithm>

#include "tileops/core/dtype.hpp"

namespace tileops::expr {

std::string type_name(Type type) {
  static constexpr std::string_view kNames[] = {"Int",   "Bool",   "Float",  "Str",
                                                "DType", "None",   "IntSeq", "FloatSeq",
                                                "Tuple", "Tensor", "Any"};
  std::string s(kNames[static_cast<int>(type.kind)]);
  if (type.optional && type.kind != Kind::kNone) s += " | None";
  return s;
}

int Scope::declare(std::string name, Type type, NameRole role) {
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    e.type = type;
    e.role = role;
    return e.slot;
  }
  int slot = num_slots();
  entries_.push_back({std::move(name), type, role, slot});
  return slot;
}

const Scope::Entry* Scope::find(std::string_view name) const noexcept {
  for (const Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

namespace detail {

std::string plural(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

void Compiler::fail(const Ast& a, std::string detail) {
  throw ExprError(a.column, std::move(detail));
}

NodePtr Compiler::make(NodeOp op, Kind kind, const Ast& a) {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->kind = kind;
  n->text = unparse(a);
  return n;
}

NodePtr Compiler::constant(Value v, Kind kind, const Ast& a) {
  NodePtr n = make(NodeOp::kConst, kind, a);
  n->constant = std::move(v);
  return n;
}

std::vector<int> Compiler::take_reads() {
  std::sort(reads_.begin(), reads_.end());
  reads_.erase(std::unique(reads_.begin(), reads_.end()), reads_.end());
  return std::move(reads_);
}

namespace {
bool is_number(Kind k) { return k == Kind::kInt || k == Kind::kFloat; }
Type type_of(const Node& n) { return {n.kind, n.optional}; }
}  // namespace

NodePtr Compiler::value(const Ast& a) {
  NodePtr n = any(a);
  if (n->kind == Kind::kTensor)
    fail(a, "tensor '" + n->text + "' can be read only through present() or bytes()");
  if (n->optional) {
    if (n->op == NodeOp::kSlot)
      fail(a, "'" + n->text + "' may be None: test present(" + n->text + ") and read " + n->text +
                  ".value");
    fail(a, "'" + n->text + "' may be None");
  }
  return n;
}

NodePtr Compiler::any(const Ast& a) {
  switch (a.op) {
    case AstOp::kIntLit:
      return constant(Value(a.int_value), Kind::kInt, a);
    case AstOp::kFloatLit:
      return constant(Value(a.float_value), Kind::kFloat, a);
    case AstOp::kStrLit:
      return constant(Value(a.text), Kind::kStr, a);
    case AstOp::kBoolLit:
      return constant(Value(a.bool_value), Kind::kBool, a);
    case AstOp::kNoneLit:
      return constant(Value(), Kind::kNone, a);
    case AstOp::kName:
      return name(a);
    case AstOp::kTuple:
      return tuple(a);
    case AstOp::kNeg:
    case AstOp::kPos:
    case AstOp::kNot:
      return unary(a);
    case AstOp::kAdd:
    case AstOp::kSub:
    case AstOp::kMul:
    case AstOp::kFloorDiv:
    case AstOp::kMod:
      return arithmetic(a);
    case AstOp::kAnd:
    case AstOp::kOr:
      return logic(a);
    case AstOp::kCompare:
      return compare(a);
    case AstOp::kIfElse:
      return if_else(a);
    case AstOp::kSubscript:
    case AstOp::kSlice:
      return subscript(a);
    case AstOp::kAttr:
      return attr(a);
    case AstOp::kCall:
      return call(a);
    case AstOp::kGenerator:
      fail(a,
           "a generator expression is allowed only as the single argument of all, any, sum, "
           "max or min");
    case AstOp::kStar:
      fail(a, "starred expressions are allowed only as shape axes");
  }
  fail(a, "unsupported expression");
}

NodePtr Compiler::name(const Ast& a) {
  for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
    if (it->name != a.text) continue;
    NodePtr n = make(NodeOp::kLocal, it->type.kind, a);
    n->index = static_cast<int>(locals_.rend() - it) - 1;
    return n;
  }
  if (const Scope::Entry* e = scope_.find(a.text)) {
    NodePtr n = make(NodeOp::kSlot, e->type.kind, a);
    n->optional = e->type.optional;
    n->index = e->slot;
    reads_.push_back(e->slot);
    return n;
  }
  if (std::optional<DType> d = parse_dtype(a.text)) return constant(Value(*d), Kind::kDType, a);
  fail(a, "unknown name '" + a.text + "'");
}

// A tuple of ints is an IntSeq (so it compares with shapes and feeds shape primitives); any other
// tuple is a Tuple. Constant tuples fold.
NodePtr Compiler::tuple(const Ast& a) {
  std::vector<NodePtr> items;
  bool ints = true;
  bool constant_items = true;
  for (const auto& arg : a.args) {
    items.push_back(value(*arg));
    ints = ints && items.back()->kind == Kind::kInt;
    constant_items = constant_items && items.back()->op == NodeOp::kConst;
  }
  if (ints && constant_items) {
    Shape s;
    for (const auto& i : items) s.push_back(i->constant.as_int());
    return constant(Value(std::move(s)), Kind::kIntSeq, a);
  }
  if (constant_items) {
    ValueTuple t;
    for (auto& i : items) t.push_back(std::move(i->constant));
    return constant(Value(std::move(t)), Kind::kTuple, a);
  }
  NodePtr n = make(ints ? NodeOp::kIntSeqBuild : NodeOp::kTupleBuild,
                   ints ? Kind::kIntSeq : Kind::kTuple, a);
  n->args = std::move(items);
  return n;
}

NodePtr Compiler::unary(const Ast& a) {
  NodePtr x = value(*a.args[0]);
  if (a.op == AstOp::kNot) {
    if (x->kind != Kind::kBool)
      fail(a, "'not' needs a Bool operand, got " + type_name(type_of(*x)));
    NodePtr n = make(NodeOp::kNot, Kind::kBool, a);
    n->args.push_back(std::move(x));
    return n;
  }
  const char* op = a.op == AstOp::kNeg ? "-" : "+";
  if (!is_number(x->kind))
    fail(a, std::string("unary '") + op + "' needs a number, got " + type_name(type_of(*x)));
  if (a.op == AstOp::kPos) return x;
  NodePtr n = make(NodeOp::kNeg, x->kind, a);
  n->num = x->kind == Kind::kInt ? NumMode::kInt : NumMode::kFloat;
  n->args.push_back(std::move(x));
  return n;
}

NodePtr Compiler::arithmetic(const Ast& a) {
  NodePtr l = value(*a.args[0]);
  NodePtr r = value(*a.args[1]);
  NodeOp op = NodeOp::kAdd;
  const char* text = "+";
  switch (a.op) {
    case AstOp::kSub:
      op = NodeOp::kSub;
      text = "-";
      break;
    case AstOp::kMul:
      op = NodeOp::kMul;
      text = "*";
      break;
    case AstOp::kFloorDiv:
      op = NodeOp::kFloorDiv;
      text = "//";
      break;
    case AstOp::kMod:
      op = NodeOp::kMod;
      text = "%";
      break;
    default:
      break;
  }
  NodePtr n;
  if (is_number(l->kind) && is_number(r->kind)) {
    bool ints = l->kind == Kind::kInt && r->kind == Kind::kInt;
    n = make(op, ints ? Kind::kInt : Kind::kFloat, a);
    n->num = ints ? NumMode::kInt : NumMode::kFloat;
  } else if (op == NodeOp::kAdd && l->kind == Kind::kIntSeq && r->kind == Kind::kIntSeq) {
    n = make(NodeOp::kConcat, Kind::kIntSeq, a);
  } else {
    fail(a, std::string("'") + text + "' cannot apply to " + type_name(type_of(*l)) + " and " +
                type_name(type_of(*r)));
  }
  n->args.push_back(std::move(l));
  n->args.push_back(std::move(r));
  return n;
}

NodePtr Compiler::logic(const Ast& a) {
  const char* text = a.op == AstOp::kAnd ? "and" : "or";
  NodePtr n = make(a.op == AstOp::kAnd ? NodeOp::kAnd : NodeOp::kOr, Kind::kBool, a);
  for (const auto& arg : a.args) {
    NodePtr x = value(*arg);
    if (x->kind != Kind::kBool)
      fail(*arg, std::string("'") + text + "' needs Bool operands, got " + type_name(type_of(*x)) +
                     " ('" + x->text + "')");
    n->args.push_back(std::move(x));
  }
  return n;
}

namespace {

std::string_view cmp_name(CmpOp op) {
  switch (op) {
    case CmpOp::kEq:
      return "==";
    case CmpOp::kNe:
      return "!=";
    case CmpOp::kLt:
      return "<";
    case CmpOp::kLe:
      return "<=";
    case CmpOp::kGt:
      return ">";
    case CmpOp::kGe:
      return ">=";
    case CmpOp::kIn:
      return "in";
    case CmpOp::kNotIn:
      return "not in";
  }
  return "?";
}

bool is_equality(CmpOp op) { return op == CmpOp::kEq || op == CmpOp::kNe; }

// A string literal compared with a dtype names a dtype.
Value dtype_literal(const Ast& a) {
  std::optional<DType> d = parse_dtype(a.text);
  if (!d) throw ExprError(a.column, "'" + a.text + "' is not a dtype name");
  return Value(*d);
}

}  // namespace

CmpMode Compiler::cmp_mode(const Ast& whole, CmpOp op, NodePtr& lhs, const Ast& lhs_ast,
                           NodePtr& rhs, const Ast& rhs_ast) {
  Kind l = lhs->kind;
  Kind r = rhs->kind;
  auto mismatch = [&]() -> CmpMode {
    fail(whole, "cannot compare " + type_name(type_of(*lhs)) + " with " + type_name(type_of(*rhs)) +
                    " using '" + std::string(cmp_name(op)) + "'");
  };
  if (op == CmpOp::kIn || op == CmpOp::kNotIn) {
    if (l == Kind::kDType && rhs_ast.op == AstOp::kTuple) {
      bool strs = std::all_of(rhs_ast.args.begin(), rhs_ast.args.end(),
                              [](const AstPtr& x) { return x->op == AstOp::kStrLit; });
      if (strs && !rhs_ast.args.empty()) {
        ValueTuple dtypes;
        for (const auto& x : rhs_ast.args) dtypes.push_back(dtype_literal(*x));
        rhs = constant(Value(std::move(dtypes)), Kind::kTuple, rhs_ast);
        return CmpMode::kInTuple;
      }
    }
    if (r == Kind::kIntSeq && l == Kind::kInt) return CmpMode::kInIntSeq;
    if (r == Kind::kFloatSeq && is_number(l)) return CmpMode::kInFloatSeq;
    if (r == Kind::kTuple) return CmpMode::kInTuple;
    if (r == Kind::kIntSeq || r == Kind::kFloatSeq) return mismatch();
    fail(whole, "'" + std::string(cmp_name(op)) + "' needs a sequence on the right, got " +
                    type_name(type_of(*rhs)));
  }
  if (l == Kind::kNone || r == Kind::kNone)
    fail(whole, "comparison with None is not supported (use present())");
  if (l == Kind::kInt && r == Kind::kInt) return CmpMode::kInt;
  if (is_number(l) && is_number(r)) return CmpMode::kFloat;
  if (l == Kind::kStr && r == Kind::kStr) return CmpMode::kStr;
  if (l == Kind::kDType || r == Kind::kDType) {
    if (!is_equality(op))
      fail(whole,
           "dtypes compare only with '==' and '!=', got '" + std::string(cmp_name(op)) + "'");
    if (l == Kind::kDType && r == Kind::kStr && rhs_ast.op == AstOp::kStrLit)
      rhs = constant(dtype_literal(rhs_ast), Kind::kDType, rhs_ast);
    else if (r == Kind::kDType && l == Kind::kStr && lhs_ast.op == AstOp::kStrLit)
      lhs = constant(dtype_literal(lhs_ast), Kind::kDType, lhs_ast);
    if (lhs->kind == Kind::kDType && rhs->kind == Kind::kDType) return CmpMode::kDType;
    return mismatch();
  }
  if (l == Kind::kBool && r == Kind::kBool) {
    if (!is_equality(op))
      fail(whole, "Bools compare only with '==' and '!=', got '" + std::string(cmp_name(op)) + "'");
    return CmpMode::kBool;
  }
  if (l == Kind::kIntSeq && r == Kind::kIntSeq) return CmpMode::kIntSeq;
  bool loose = l == Kind::kAny || r == Kind::kAny ||
               ((l == Kind::kTuple || l == Kind::kIntSeq || l == Kind::kFloatSeq) &&
                (r == Kind::kTuple || r == Kind::kIntSeq || r == Kind::kFloatSeq));
  if (loose && l != Kind::kTensor && r != Kind::kTensor) {
    if (!is_equality(op) && l != Kind::kAny && r != Kind::kAny) return mismatch();
    return CmpMode::kValue;
  }
  return mismatch();
}

NodePtr Compiler::compare(const Ast& a) {
  NodePtr n = make(NodeOp::kCompare, Kind::kBool, a);
  n->cmp = a.cmp;
  for (const auto& arg : a.args) n->args.push_back(value(*arg));
  for (std::size_t i = 0; i < a.cmp.size(); ++i)
    n->modes.push_back(
        cmp_mode(a, a.cmp[i], n->args[i], *a.args[i], n->args[i + 1], *a.args[i + 1]));
  return n;
}

// The branches' common type: equal kinds; Int with Float is Float; None with K is K | None.
NodePtr Compiler::if_else(const Ast& a) {
  NodePtr cond = value(*a.args[1]);
  if (cond->kind != Kind::kBool)
    fail(*a.args[1], "the condition of 'if' must be Bool, got " + type_name(type_of(*cond)) +
                         " ('" + cond->text + "')");
  NodePtr then = any(*a.args[0]);
  NodePtr otherwise = any(*a.args[2]);
  if (then->kind == Kind::kTensor || otherwise->kind == Kind::kTensor)
    fail(a, "a conditional cannot yield a tensor");
  Type t = type_of(*then);
  Type e = type_of(*otherwise);
  Type out;
  if (t.kind == e.kind) {
    out = {t.kind, t.optional || e.optional};
  } else if (is_number(t.kind) && is_number(e.kind)) {
    out = {Kind::kFloat, t.optional || e.optional};
  } else if (t.kind == Kind::kNone) {
    out = {e.kind, true};
  } else if (e.kind == Kind::kNone) {
    out = {t.kind, true};
  } else {
    fail(a, "the branches of 'if' have different kinds: " + type_name(t) + " and " + type_name(e));
  }
  NodePtr n = make(NodeOp::kIfElse, out.kind, a);
  n->optional = out.optional;
  n->num = out.kind == Kind::kFloat ? NumMode::kFloat : NumMode::kInt;
  n->args.push_back(std::move(cond));
  n->args.push_back(std::move(then));
  n->args.push_back(std::move(otherwise));
  return n;
}

NodePtr Compiler::subscript(const Ast& a) {
  NodePtr base = value(*a.args[0]);
  Kind item;
  switch (base->kind) {
    case Kind::kIntSeq:
      item = Kind::kInt;
      break;
    case Kind::kFloatSeq:
      item = Kind::kFloat;
      break;
    case Kind::kTuple:
      item = Kind::kAny;
      break;
    default:
      fail(a, "cannot subscript " + type_name(type_of(*base)) + " ('" + base->text + "')");
  }
  bool slice = a.op == AstOp::kSlice;
  NodePtr n = make(slice ? NodeOp::kSlice : NodeOp::kIndex, slice ? base->kind : item, a);
  n->args.push_back(std::move(base));
  for (std::size_t i = 1; i < a.args.size(); ++i) {
    NodePtr bound = any(*a.args[i]);
    bool open = slice && bound->kind == Kind::kNone && bound->op == NodeOp::kConst;
    if (bound->kind != Kind::kInt || bound->optional) {
      if (!open)
        fail(*a.args[i], std::string(slice ? "slice bounds" : "a subscript") +
                             " must be Int, got " + type_name(type_of(*bound)));
    }
    n->args.push_back(std::move(bound));
  }
  return n;
}

NodePtr Compiler::attr(const Ast& a) {
  const Ast& base = *a.args[0];
  const Scope::Entry* e = base.op == AstOp::kName ? scope_.find(base.text) : nullptr;
  bool local = false;
  for (const auto& l : locals_) local = local || (base.op == AstOp::kName && l.name == base.text);
  if (!e || local || !e->type.optional || e->role == NameRole::kTensor)
    fail(a, "'.value' applies only to an optional param, not to '" + unparse(base) + "'");
  NodePtr n = make(NodeOp::kOptValue, e->type.kind, a);
  n->index = e->slot;
  reads_.push_back(e->slot);
  return n;
}

}  // namespace detail

Program compile(const Ast& ast, std::string_view source, const Scope& scope,
                CompileOptions options) {
  detail::Compiler c(scope, options);
  NodePtr root = c.any(ast);
  if (root->kind == Kind::kTensor)
    throw ExprError(ast.column,
                    "tensor '" + root->text + "' can be read only through present() or bytes()");
  Program p;
  p.type_ = {root->kind, root->optional};
  p.root_ = std::move(root);
  p.source_ = std::string(source);
  p.reads_ = c.take_reads();
  return p;
}

Program compile(std::string_view source, const Scope& scope, CompileOptions options) {
  AstPtr ast = parse(source);
  return compile(*ast, source, scope, options);
}

}  // namespace tileops::expr
