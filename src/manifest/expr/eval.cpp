// Program and the operator half of the tree walk (eval.hpp). Errors name the failing
// subexpression as written: "integer overflow in 'M * N' (4294967296 * 4294967296)".

#include "manifest/expr/eval.hpp"

#include <algorithm>
#include <limits>

#include "manifest/expr/semantics.hpp"

namespace tileops::expr {

Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::Program(const Program&) = default;
Program& Program::operator=(const Program&) = default;
Program::~Program() = default;

Value Program::eval(Frame frame) const {
  if (!root_) throw EvalError("evaluating an empty program");
  // reads_ is sorted: one check guards every slot access below.
  if (!reads_.empty() && static_cast<std::size_t>(reads_.back()) >= frame.size())
    throw EvalError("'" + source_ + "' reads slot " + std::to_string(reads_.back()) +
                    " of a frame with " + std::to_string(frame.size()) + " slots");
  detail::Ctx c;  // locals stay uninitialised: each is set before its generator's body reads it
  c.frame = frame;
  return detail::eval_value(*root_, c);
}

namespace detail {

void eval_fail(const Node& n, const std::string& what) {
  throw EvalError(what + " in '" + n.text + "'");
}

namespace {

[[noreturn]] void overflow(const Node& n, std::int64_t a, std::int64_t b, const char* op) {
  throw EvalError("integer overflow in '" + n.text + "' (" + std::to_string(a) + " " + op + " " +
                  std::to_string(b) + ")");
}

const Value& opt_value(const Node& n, Ctx& c) {
  const Value& v = c.frame[static_cast<std::size_t>(n.index)];
  if (v.is_none()) {
    std::string name = n.text.substr(0, n.text.size() - 6);  // drop ".value"
    throw EvalError("'" + name + "' is None in '" + n.text + "'");
  }
  return v;
}

// Python's index rules: negative counts from the end; out of range is an error.
std::size_t index_of(const Node& n, std::int64_t i, std::size_t size) {
  auto len = static_cast<std::int64_t>(size);
  std::int64_t j = i < 0 ? i + len : i;
  if (j < 0 || j >= len)
    eval_fail(n,
              "index " + std::to_string(i) + " is out of range for length " + std::to_string(len));
  return static_cast<std::size_t>(j);
}

// Python's slice clamping: bounds past either end are cut to the sequence.
std::pair<std::size_t, std::size_t> slice_range(const Node& n, Ctx& c, std::size_t size) {
  auto len = static_cast<std::int64_t>(size);
  auto bound = [&](const Node& b, std::int64_t open) {
    if (b.kind == Kind::kNone) return open;
    std::int64_t v = eval_int(b, c);
    if (v < 0) v = std::max<std::int64_t>(v + len, 0);
    return std::min(v, len);
  };
  std::int64_t lo = bound(*n.args[1], 0);
  std::int64_t hi = bound(*n.args[2], len);
  if (hi < lo) hi = lo;
  return {static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)};
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Value::Kind::kStr:
      return a.as_str() == b.as_str();
    case Value::Kind::kDType:
      return a.as_dtype() == b.as_dtype();
    case Value::Kind::kIntList:
      return a.as_int_list() == b.as_int_list();
    case Value::Kind::kFloatList:
      return a.as_float_list() == b.as_float_list();
    case Value::Kind::kTuple: {
      const ValueTuple& x = a.as_tuple();
      const ValueTuple& y = b.as_tuple();
      return std::equal(x.begin(), x.end(), y.begin(), y.end(), values_equal);
    }
    default:
      return false;
  }
}

template <class T>
bool order(CmpOp op, const T& a, const T& b) {
  switch (op) {
    case CmpOp::kEq:
      return a == b;
    case CmpOp::kNe:
      return !(a == b);
    case CmpOp::kLt:
      return a < b;
    case CmpOp::kLe:
      return !(b < a);
    case CmpOp::kGt:
      return b < a;
    case CmpOp::kGe:
      return !(a < b);
    default:
      return false;
  }
}

struct Lexicographic {
  std::span<const std::int64_t> s;
  bool operator<(const Lexicographic& o) const {
    return std::lexicographical_compare(s.begin(), s.end(), o.s.begin(), o.s.end());
  }
  bool operator==(const Lexicographic& o) const {
    return std::equal(s.begin(), s.end(), o.s.begin(), o.s.end());
  }
};

bool compare_values(const Node& n, CmpMode mode, CmpOp op, const Value& a, const Value& b) {
  bool negate = op == CmpOp::kNotIn;
  bool found = false;
  switch (mode) {
    case CmpMode::kInt:
      return order(op, a.as_int(), b.as_int());
    case CmpMode::kFloat:
      return order(op, a.as_float(), b.as_float());
    case CmpMode::kStr:
      return order(op, a.as_str(), b.as_str());
    case CmpMode::kDType:
      return order(op, a.as_dtype(), b.as_dtype());
    case CmpMode::kBool:
      return order(op, a.as_bool(), b.as_bool());
    case CmpMode::kIntSeq:
      return order(op, Lexicographic{a.as_int_list().span()},
                   Lexicographic{b.as_int_list().span()});
    case CmpMode::kValue:
      if (op == CmpOp::kEq) return values_equal(a, b);
      if (op == CmpOp::kNe) return !values_equal(a, b);
      if (!a.is_number() || !b.is_number())
        eval_fail(n, "cannot order " + std::string(value_kind_name(a.kind())) + " and " +
                         std::string(value_kind_name(b.kind())));
      return order(op, a.as_float(), b.as_float());
    case CmpMode::kInIntSeq: {
      const Shape& s = b.as_int_list();
      found = std::find(s.begin(), s.end(), a.as_int()) != s.end();
      break;
    }
    case CmpMode::kInFloatSeq: {
      const auto& s = b.as_float_list();
      found = std::find(s.begin(), s.end(), a.as_float()) != s.end();
      break;
    }
    case CmpMode::kInTuple:
      for (const Value& item : b.as_tuple()) found = found || values_equal(a, item);
      break;
  }
  return found != negate;
}

bool compare(const Node& n, Ctx& c) {
  // The common one-link integer comparison builds no Value.
  if (n.modes.size() == 1 && n.modes[0] == CmpMode::kInt)
    return order(n.cmp[0], eval_int(*n.args[0], c), eval_int(*n.args[1], c));
  // Operands are read in place where possible; two scratch values alternate along the chain.
  Value scratch[2];
  const Value* left = &eval_ref(*n.args[0], c, scratch[0]);
  for (std::size_t i = 0; i < n.cmp.size(); ++i) {
    const Value& right = eval_ref(*n.args[i + 1], c, scratch[(i + 1) % 2]);
    if (!compare_values(n, n.modes[i], n.cmp[i], *left, right)) return false;  // chains stop early
    left = &right;
  }
  return true;
}

}  // namespace

const Value& eval_ref(const Node& n, Ctx& c, Value& scratch) {
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant;
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)];
    case NodeOp::kLocal:
      return *c.locals[n.index];
    default:
      scratch = eval_value(n, c);
      return scratch;
  }
}

const Shape& eval_shape(const Node& n, Ctx& c, Shape& scratch) {
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant.as_int_list();
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)].as_int_list();
    case NodeOp::kLocal:
      return c.locals[n.index]->as_int_list();
    case NodeOp::kOptValue:
      return opt_value(n, c).as_int_list();
    case NodeOp::kIntSeqBuild:
      scratch.clear();
      for (const auto& a : n.args) scratch.push_back(eval_int(*a, c));
      return scratch;
    case NodeOp::kConcat: {
      Shape right;
      const Shape& r = eval_shape(*n.args[1], c, right);
      Shape left;
      scratch = eval_shape(*n.args[0], c, left);
      scratch.append(r);
      return scratch;
    }
    case NodeOp::kSlice: {
      Shape tmp;
      const Shape& base = eval_shape(*n.args[0], c, tmp);
      auto [lo, hi] = slice_range(n, c, base.size());
      scratch = Shape(base.span().subspan(lo, hi - lo));
      return scratch;
    }
    default:
      scratch = eval_value(n, c).as_int_list();
      return scratch;
  }
}

std::int64_t eval_int(const Node& n, Ctx& c) {
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant.as_int();
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)].as_int();
    case NodeOp::kLocal:
      return c.locals[n.index]->as_int();
    case NodeOp::kOptValue:
      return opt_value(n, c).as_int();
    case NodeOp::kNeg: {
      std::int64_t x = eval_int(*n.args[0], c);
      if (x == std::numeric_limits<std::int64_t>::min())
        throw EvalError("integer overflow in '" + n.text + "' (-(" + std::to_string(x) + "))");
      return -x;
    }
    case NodeOp::kAdd:
    case NodeOp::kSub:
    case NodeOp::kMul:
    case NodeOp::kFloorDiv:
    case NodeOp::kMod: {
      std::int64_t a = eval_int(*n.args[0], c);
      std::int64_t b = eval_int(*n.args[1], c);
      std::optional<std::int64_t> r;
      switch (n.op) {
        case NodeOp::kAdd:
          if (!(r = checked_add(a, b))) overflow(n, a, b, "+");
          return *r;
        case NodeOp::kSub:
          if (!(r = checked_sub(a, b))) overflow(n, a, b, "-");
          return *r;
        case NodeOp::kMul:
          if (!(r = checked_mul(a, b))) overflow(n, a, b, "*");
          return *r;
        default:
          break;
      }
      if (b == 0) eval_fail(n, "division by zero");
      if (n.op == NodeOp::kMod) return floor_mod(a, b);
      if (!(r = floor_div(a, b))) overflow(n, a, b, "//");
      return *r;
    }
    case NodeOp::kIfElse:
      return eval_bool(*n.args[0], c) ? eval_int(*n.args[1], c) : eval_int(*n.args[2], c);
    case NodeOp::kIndex: {
      Shape tmp;
      const Shape& s = eval_shape(*n.args[0], c, tmp);
      return s[index_of(n, eval_int(*n.args[1], c), s.size())];
    }
    default:
      return eval_int_call(n, c);
  }
}

double eval_float(const Node& n, Ctx& c) {
  if (n.kind == Kind::kInt) return static_cast<double>(eval_int(n, c));
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant.as_float();
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)].as_float();
    case NodeOp::kLocal:
      return c.locals[n.index]->as_float();
    case NodeOp::kOptValue:
      return opt_value(n, c).as_float();
    case NodeOp::kNeg:
      return -eval_float(*n.args[0], c);
    case NodeOp::kAdd:
      return eval_float(*n.args[0], c) + eval_float(*n.args[1], c);
    case NodeOp::kSub:
      return eval_float(*n.args[0], c) - eval_float(*n.args[1], c);
    case NodeOp::kMul:
      return eval_float(*n.args[0], c) * eval_float(*n.args[1], c);
    case NodeOp::kFloorDiv:
    case NodeOp::kMod: {
      double a = eval_float(*n.args[0], c);
      double b = eval_float(*n.args[1], c);
      if (b == 0) eval_fail(n, "division by zero");
      return n.op == NodeOp::kMod ? float_mod(a, b) : float_floor_div(a, b);
    }
    case NodeOp::kIfElse:
      return eval_bool(*n.args[0], c) ? eval_float(*n.args[1], c) : eval_float(*n.args[2], c);
    case NodeOp::kIndex: {
      Value base = eval_value(*n.args[0], c);
      const auto& s = base.as_float_list();
      return s[index_of(n, eval_int(*n.args[1], c), s.size())];
    }
    default:
      return eval_value_call(n, c).as_float();
  }
}

bool eval_bool(const Node& n, Ctx& c) {
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant.as_bool();
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)].as_bool();
    case NodeOp::kLocal:
      return c.locals[n.index]->as_bool();
    case NodeOp::kOptValue:
      return opt_value(n, c).as_bool();
    case NodeOp::kNot:
      return !eval_bool(*n.args[0], c);
    case NodeOp::kAnd:
      return eval_bool(*n.args[0], c) && eval_bool(*n.args[1], c);
    case NodeOp::kOr:
      return eval_bool(*n.args[0], c) || eval_bool(*n.args[1], c);
    case NodeOp::kCompare:
      return compare(n, c);
    case NodeOp::kIfElse:
      return eval_bool(*n.args[0], c) ? eval_bool(*n.args[1], c) : eval_bool(*n.args[2], c);
    default:
      return eval_bool_call(n, c);
  }
}

Value eval_value(const Node& n, Ctx& c) {
  if (!n.optional) {
    if (n.kind == Kind::kInt) return Value(eval_int(n, c));
    if (n.kind == Kind::kBool) return Value(eval_bool(n, c));
    if (n.kind == Kind::kFloat) return Value(eval_float(n, c));
  }
  switch (n.op) {
    case NodeOp::kConst:
      return n.constant;
    case NodeOp::kSlot:
      return c.frame[static_cast<std::size_t>(n.index)];
    case NodeOp::kLocal:
      return *c.locals[n.index];
    case NodeOp::kOptValue:
      return opt_value(n, c);
    case NodeOp::kIfElse: {
      const Node& branch = eval_bool(*n.args[0], c) ? *n.args[1] : *n.args[2];
      // An Int branch of a Float conditional widens.
      if (n.kind == Kind::kFloat && branch.kind == Kind::kInt)
        return Value(static_cast<double>(eval_int(branch, c)));
      return eval_value(branch, c);
    }
    case NodeOp::kIntSeqBuild:
    case NodeOp::kConcat: {
      Shape s;
      const Shape& r = eval_shape(n, c, s);
      return &r == &s ? Value(std::move(s)) : Value(r);
    }
    case NodeOp::kTupleBuild: {
      ValueTuple t;
      t.reserve(n.args.size());
      for (const auto& a : n.args) t.push_back(eval_value(*a, c));
      return Value(std::move(t));
    }
    case NodeOp::kIndex: {
      Value base = eval_value(*n.args[0], c);
      const ValueTuple& t = base.as_tuple();
      return t[index_of(n, eval_int(*n.args[1], c), t.size())];
    }
    case NodeOp::kSlice: {
      if (n.kind == Kind::kIntSeq) {
        Shape s;
        const Shape& r = eval_shape(n, c, s);
        return &r == &s ? Value(std::move(s)) : Value(r);
      }
      Value base = eval_value(*n.args[0], c);
      if (n.kind == Kind::kFloatSeq) {
        const auto& f = base.as_float_list();
        auto [lo, hi] = slice_range(n, c, f.size());
        return Value(std::vector<double>(f.begin() + static_cast<std::ptrdiff_t>(lo),
                                         f.begin() + static_cast<std::ptrdiff_t>(hi)));
      }
      const ValueTuple& t = base.as_tuple();
      auto [lo, hi] = slice_range(n, c, t.size());
      return Value(ValueTuple(t.begin() + static_cast<std::ptrdiff_t>(lo),
                              t.begin() + static_cast<std::ptrdiff_t>(hi)));
    }
    default:
      return eval_value_call(n, c);
  }
}

}  // namespace detail
}  // namespace tileops::expr
