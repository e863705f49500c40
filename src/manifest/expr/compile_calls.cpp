// Kind checks of the primitive calls (docs/manifest.md §6.6): arity, keyword arguments and
// argument kinds, each failure naming the primitive and the argument.

#include <array>

#include "manifest/expr/compiler.hpp"

namespace tileops::expr {

namespace {
constexpr std::array<std::string_view, 19> kPrimitives = {"present",
                                                          "len",
                                                          "prod",
                                                          "sum",
                                                          "max",
                                                          "min",
                                                          "all",
                                                          "any",
                                                          "ceil_div",
                                                          "broadcast",
                                                          "reduced",
                                                          "valid_axes",
                                                          "unique_axes",
                                                          "normalize_axis",
                                                          "promote_int_to_float",
                                                          "coalesce_dtype",
                                                          "category",
                                                          "representable",
                                                          "bytes"};
}  // namespace

std::span<const std::string_view> primitive_names() noexcept { return kPrimitives; }

namespace detail {
namespace {

bool is_number(Kind k) { return k == Kind::kInt || k == Kind::kFloat; }
// The kind of the items a sequence_or_generator() node yields.
Kind item_kind(const Node& n) {
  if (n.op == NodeOp::kGenerator) return n.kind;
  if (n.kind == Kind::kIntSeq) return Kind::kInt;
  if (n.kind == Kind::kFloatSeq) return Kind::kFloat;
  return Kind::kBool;
}
Type type_of(const Node& n) { return {n.kind, n.optional}; }

void arity(const Ast& a, std::size_t n) {
  if (a.args.size() != n)
    Compiler::fail(
        a, a.text + "() takes " + plural(n, "argument") + ", got " + std::to_string(a.args.size()));
}

[[noreturn]] void bad_arg(const Ast& call, std::size_t position, std::string_view expected,
                          const Node& got) {
  Compiler::fail(*call.args[position], call.text + "(): argument " + std::to_string(position + 1) +
                                           " must be " + std::string(expected) + ", got " +
                                           type_name(type_of(got)));
}

void expect_kind(const Ast& call, std::size_t position, const Node& got, Kind kind) {
  if (got.kind != kind) bad_arg(call, position, type_name({kind, false}), got);
}

}  // namespace

NodePtr Compiler::call(const Ast& a) {
  const std::string& f = a.text;
  bool known = false;
  for (std::string_view p : kPrimitives) known = known || p == f;
  if (!known) fail(a, "unknown function '" + f + "'");
  bool reduction = f == "max" || f == "min";
  if (!a.kwargs.empty() && !reduction) fail(a, f + "() takes no keyword arguments");

  if (f == "present") return present(a);
  if (f == "bytes") return bytes(a);
  if (f == "len") {
    arity(a, 1);
    NodePtr s = value(*a.args[0]);
    if (s->kind != Kind::kIntSeq && s->kind != Kind::kFloatSeq && s->kind != Kind::kTuple)
      bad_arg(a, 0, "a sequence", *s);
    NodePtr n = make(NodeOp::kLen, Kind::kInt, a);
    n->args.push_back(std::move(s));
    return n;
  }
  if (f == "sum" || f == "prod") {
    arity(a, 1);
    NodePtr s = sequence_or_generator(a, *a.args[0], false);
    NodePtr n = make(f == "sum" ? NodeOp::kSum : NodeOp::kProd, item_kind(*s), a);
    n->num = n->kind == Kind::kInt ? NumMode::kInt : NumMode::kFloat;
    n->args.push_back(std::move(s));
    return n;
  }
  if (reduction) {
    bool is_max = f == "max";
    for (const auto& [key, unused] : a.kwargs)
      if (key != "default")
        fail(a, f + "() takes only the keyword argument 'default', got '" + key + "'");
    if (a.args.empty()) fail(a, f + "() takes a sequence or at least 2 numbers, got 0 arguments");
    if (a.args.size() == 1) {
      NodePtr s = sequence_or_generator(a, *a.args[0], false);
      Kind kind = item_kind(*s);
      NodePtr dflt;
      if (!a.kwargs.empty()) {
        const Ast& d = *a.kwargs[0].second;
        dflt = value(d);
        if (!is_number(dflt->kind))
          fail(d, f + "(): 'default' must be a number, got " + type_name(type_of(*dflt)));
        if (dflt->kind == Kind::kFloat) kind = Kind::kFloat;
      }
      NodePtr n = make(is_max ? NodeOp::kMaxSeq : NodeOp::kMinSeq, kind, a);
      n->num = kind == Kind::kInt ? NumMode::kInt : NumMode::kFloat;
      n->args.push_back(std::move(s));
      if (dflt) n->args.push_back(std::move(dflt));
      return n;
    }
    if (!a.kwargs.empty())
      fail(a, f + "(): 'default' is allowed only with a single sequence argument");
    NodePtr n = make(is_max ? NodeOp::kMaxArgs : NodeOp::kMinArgs, Kind::kInt, a);
    for (std::size_t i = 0; i < a.args.size(); ++i) {
      NodePtr x = value(*a.args[i]);
      if (!is_number(x->kind)) bad_arg(a, i, "a number", *x);
      if (x->kind == Kind::kFloat) n->kind = Kind::kFloat;
      n->args.push_back(std::move(x));
    }
    n->num = n->kind == Kind::kInt ? NumMode::kInt : NumMode::kFloat;
    return n;
  }
  if (f == "all" || f == "any") {
    arity(a, 1);
    NodePtr s = sequence_or_generator(a, *a.args[0], true);
    NodePtr n = make(f == "all" ? NodeOp::kAll : NodeOp::kAny, Kind::kBool, a);
    n->args.push_back(std::move(s));
    return n;
  }
  if (f == "ceil_div" || f == "normalize_axis") {
    arity(a, 2);
    NodePtr n = make(f == "ceil_div" ? NodeOp::kCeilDiv : NodeOp::kNormalizeAxis, Kind::kInt, a);
    for (std::size_t i = 0; i < 2; ++i) {
      n->args.push_back(value(*a.args[i]));
      expect_kind(a, i, *n->args.back(), Kind::kInt);
    }
    return n;
  }
  if (f == "broadcast") {
    if (a.args.empty()) fail(a, "broadcast() takes at least 1 argument, got 0");
    NodePtr n = make(NodeOp::kBroadcast, Kind::kIntSeq, a);
    for (std::size_t i = 0; i < a.args.size(); ++i) {
      n->args.push_back(value(*a.args[i]));
      expect_kind(a, i, *n->args.back(), Kind::kIntSeq);
    }
    return n;
  }
  if (f == "reduced") {
    arity(a, 4);
    NodePtr n = make(NodeOp::kReduced, Kind::kIntSeq, a);
    n->args.push_back(value(*a.args[0]));
    expect_kind(a, 0, *n->args[0], Kind::kIntSeq);
    n->args.push_back(axes_arg(a, *a.args[1], 1));
    n->args.push_back(value(*a.args[2]));
    expect_kind(a, 2, *n->args[2], Kind::kBool);
    n->args.push_back(value(*a.args[3]));
    expect_kind(a, 3, *n->args[3], Kind::kStr);
    const Node& mode = *n->args[3];
    if (mode.op == NodeOp::kConst && mode.constant.as_str() != "full" &&
        mode.constant.as_str() != "noop" && mode.constant.as_str() != "reject")
      fail(*a.args[3], "reduced(): argument 4 must be 'full', 'noop' or 'reject', got '" +
                           mode.constant.as_str() + "'");
    return n;
  }
  if (f == "valid_axes" || f == "unique_axes") {
    arity(a, 2);
    NodePtr n = make(f == "valid_axes" ? NodeOp::kValidAxes : NodeOp::kUniqueAxes, Kind::kBool, a);
    n->args.push_back(axes_arg(a, *a.args[0], 0));
    n->args.push_back(value(*a.args[1]));
    expect_kind(a, 1, *n->args[1], Kind::kInt);
    return n;
  }
  if (f == "promote_int_to_float") {
    arity(a, 1);
    NodePtr n = make(NodeOp::kPromoteIntToFloat, Kind::kDType, a);
    n->args.push_back(value(*a.args[0]));
    expect_kind(a, 0, *n->args[0], Kind::kDType);
    return n;
  }
  if (f == "coalesce_dtype") {
    arity(a, 2);
    NodePtr n = make(NodeOp::kCoalesceDType, Kind::kDType, a);
    NodePtr v = any(*a.args[0]);
    if (v->kind != Kind::kDType && v->kind != Kind::kNone) bad_arg(a, 0, "DType | None", *v);
    n->args.push_back(std::move(v));
    n->args.push_back(value(*a.args[1]));
    expect_kind(a, 1, *n->args[1], Kind::kDType);
    return n;
  }
  if (f == "category") {
    arity(a, 1);
    NodePtr v = value(*a.args[0]);
    if (!is_number(v->kind) && v->kind != Kind::kBool && v->kind != Kind::kDType &&
        v->kind != Kind::kAny)
      bad_arg(a, 0, "a number, a Bool or a DType", *v);
    NodePtr n = make(NodeOp::kCategory, Kind::kStr, a);
    n->args.push_back(std::move(v));
    return n;
  }
  // representable
  arity(a, 2);
  NodePtr v = value(*a.args[0]);
  if (!is_number(v->kind) && v->kind != Kind::kBool && v->kind != Kind::kAny)
    bad_arg(a, 0, "a number or a Bool", *v);
  NodePtr n = make(NodeOp::kRepresentable, Kind::kBool, a);
  n->args.push_back(std::move(v));
  n->args.push_back(value(*a.args[1]));
  expect_kind(a, 1, *n->args[1], Kind::kDType);
  return n;
}

NodePtr Compiler::present(const Ast& a) {
  arity(a, 1);
  const Ast& x = *a.args[0];
  if (x.op != AstOp::kName)
    fail(x, "present(): argument 1 must be a name, got '" + unparse(x) + "'");
  NodePtr n = any(x);
  if (n->op != NodeOp::kSlot || (n->kind != Kind::kTensor && !n->optional))
    fail(x, "present(): '" + x.text + "' is neither a tensor nor optional (" +
                type_name(type_of(*n)) + ")");
  NodePtr p = make(NodeOp::kPresent, Kind::kBool, a);
  p->index = n->index;
  return p;
}

NodePtr Compiler::bytes(const Ast& a) {
  if (!options_.allow_bytes) fail(a, "bytes() is allowed only in roofline formulas");
  arity(a, 1);
  const Ast& x = *a.args[0];
  NodePtr n = any(x);
  if (n->op != NodeOp::kSlot || n->kind != Kind::kTensor) bad_arg(a, 0, "a tensor name", *n);
  NodePtr b = make(NodeOp::kBytes, Kind::kInt, a);
  b->index = n->index;
  return b;
}

NodePtr Compiler::axes_arg(const Ast& call, const Ast& arg, int position) {
  NodePtr d = any(arg);
  if (d->kind != Kind::kIntSeq && d->kind != Kind::kInt && d->kind != Kind::kNone &&
      d->kind != Kind::kAny)
    bad_arg(call, static_cast<std::size_t>(position), "an axis, a sequence of axes or None", *d);
  return d;
}

// The argument of sum/prod/max/min (numbers) or all/any (Bools): a generator expression, or a
// sequence of the right items. The node's kind is the item kind.
NodePtr Compiler::sequence_or_generator(const Ast& call, const Ast& arg, bool want_bool) {
  NodePtr s;
  if (arg.op == AstOp::kGenerator) {
    s = generator(arg, call.text.c_str());
    if (want_bool ? s->kind != Kind::kBool : !is_number(s->kind))
      fail(arg, call.text + "(): the generator must yield " + (want_bool ? "Bools" : "numbers") +
                    ", got " + type_name(type_of(*s)));
    return s;
  }
  s = value(arg);
  // Tuple items are checked as they are read.
  if (want_bool && s->kind != Kind::kTuple) bad_arg(call, 0, "a generator or a tuple of Bools", *s);
  if (!want_bool && s->kind != Kind::kIntSeq && s->kind != Kind::kFloatSeq)
    bad_arg(call, 0, "a sequence of numbers or a generator", *s);
  return s;
}

NodePtr Compiler::generator(const Ast& a, const char* primitive) {
  NodePtr iterable = value(*a.args[1]);
  Kind item;
  switch (iterable->kind) {
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
      fail(*a.args[1], std::string(primitive) +
                           "(): a generator must iterate over a sequence, got " +
                           type_name(type_of(*iterable)));
  }
  if (locals_.size() >= static_cast<std::size_t>(kMaxLocals))
    fail(a, "generator expressions nest too deeply");
  int index = static_cast<int>(locals_.size());
  locals_.push_back({a.text, {item, false}});
  NodePtr element = value(*a.args[0]);
  locals_.pop_back();
  NodePtr n = make(NodeOp::kGenerator, element->kind, a);
  n->index = index;
  n->args.push_back(std::move(element));
  n->args.push_back(std::move(iterable));
  return n;
}

}  // namespace detail
}  // namespace tileops::expr
