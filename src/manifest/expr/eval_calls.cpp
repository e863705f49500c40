// The primitive half of the tree walk (eval.hpp). Domain errors name the primitive call as
// written: "ceil_div divisor must be positive, got 0 in 'ceil_div(N, B)'".

#include <optional>

#include "manifest/expr/eval.hpp"
#include "manifest/expr/semantics.hpp"

namespace tileops::expr::detail {
namespace {

[[noreturn]] void overflow(const Node& n, std::int64_t a, std::int64_t b, const char* op) {
  throw EvalError("integer overflow in '" + n.text + "' (" + std::to_string(a) + " " + op + " " +
                  std::to_string(b) + ")");
}

// Runs `body` once per item of a generator's iterable, with the comprehension variable bound;
// `body` returns false to stop early (all/any short-circuit).
template <class Body>
void generate(const Node& gen, Ctx& c, Body&& body) {
  const Node& iterable = *gen.args[1];
  Value item;
  c.locals[gen.index] = &item;
  if (iterable.kind == Kind::kIntSeq) {
    Shape tmp;
    for (std::int64_t x : eval_shape(iterable, c, tmp)) {
      item = Value(x);
      if (!body()) return;
    }
    return;
  }
  Value seq = eval_value(iterable, c);
  if (seq.is_float_list()) {
    for (double x : seq.as_float_list()) {
      item = Value(x);
      if (!body()) return;
    }
    return;
  }
  for (const Value& x : seq.as_tuple()) {
    item = x;
    if (!body()) return;
  }
}

// Calls f(int64) for each item of an Int sequence or Int generator.
template <class F>
void each_int(const Node& seq, Ctx& c, F&& f) {
  if (seq.op == NodeOp::kGenerator) {
    generate(seq, c, [&] {
      f(eval_int(*seq.args[0], c));
      return true;
    });
    return;
  }
  Shape tmp;
  for (std::int64_t x : eval_shape(seq, c, tmp)) f(x);
}

// Calls f(double) for each item of a numeric sequence or generator.
template <class F>
void each_float(const Node& seq, Ctx& c, F&& f) {
  if (seq.op == NodeOp::kGenerator) {
    generate(seq, c, [&] {
      f(eval_float(*seq.args[0], c));
      return true;
    });
    return;
  }
  if (seq.kind == Kind::kIntSeq) {
    each_int(seq, c, [&](std::int64_t x) { f(static_cast<double>(x)); });
    return;
  }
  Value held = eval_value(seq, c);
  for (double x : held.as_float_list()) f(x);
}

// all() when want is true, any() when false: the result is `want` unless an item differs from it.
bool all_or_any(const Node& n, Ctx& c, bool want) {
  const Node& seq = *n.args[0];
  bool result = want;
  if (seq.op == NodeOp::kGenerator) {
    generate(seq, c, [&] {
      if (eval_bool(*seq.args[0], c) != want) result = !want;
      return result == want;
    });
    return result;
  }
  Value t = eval_value(seq, c);
  std::size_t i = 0;
  for (const Value& item : t.as_tuple()) {
    ++i;
    if (!item.is_bool()) eval_fail(n, "item " + std::to_string(i) + " is not a bool");
    if (item.as_bool() != want) return !want;
  }
  return want;
}

// A dim argument at run time: None, an int or a list of ints.
const Value& axes_value(const Node& n, const Node& arg, Ctx& c, Value& scratch) {
  const Value& d = eval_ref(arg, c, scratch);
  if (!d.is_none() && !d.is_int() && !d.is_int_list())
    eval_fail(n, "dim must be None, an int or a list of ints, got " +
                     std::string(value_kind_name(d.kind())));
  return d;
}

std::int64_t ceil_div(const Node& n, Ctx& c) {
  std::int64_t a = eval_int(*n.args[0], c);
  std::int64_t b = eval_int(*n.args[1], c);
  if (b <= 0) eval_fail(n, "ceil_div divisor must be positive, got " + std::to_string(b));
  std::int64_t q = a / b;  // truncates: already the ceiling for a <= 0
  return a % b > 0 ? q + 1 : q;
}

std::int64_t bytes(const Node& n, Ctx& c) {
  const Value& v = c.frame[static_cast<std::size_t>(n.index)];
  if (v.is_none()) eval_fail(n, "the tensor is absent");
  const Tensor& t = v.as_tensor();
  std::optional<std::int64_t> numel = t.shape().checked_numel();
  if (!numel) eval_fail(n, "the element count overflows int64");
  std::int64_t bits = dtype_bits(t.dtype());
  std::optional<std::int64_t> total = checked_mul(*numel, bits);
  if (!total) overflow(n, *numel, bits, "*");
  return *total / 8 + (*total % 8 != 0 ? 1 : 0);
}

template <class T>
T pick(bool is_max, T best, T x) {
  return is_max ? (x > best ? x : best) : (x < best ? x : best);
}

}  // namespace

std::int64_t eval_int_call(const Node& n, Ctx& c) {
  switch (n.op) {
    case NodeOp::kLen: {
      const Node& s = *n.args[0];
      if (s.kind == Kind::kIntSeq) {
        Shape tmp;
        return static_cast<std::int64_t>(eval_shape(s, c, tmp).size());
      }
      Value v = eval_value(s, c);
      return static_cast<std::int64_t>(v.is_float_list() ? v.as_float_list().size()
                                                         : v.as_tuple().size());
    }
    case NodeOp::kSum:
    case NodeOp::kProd: {
      bool sum = n.op == NodeOp::kSum;
      std::int64_t acc = sum ? 0 : 1;
      each_int(*n.args[0], c, [&](std::int64_t x) {
        std::optional<std::int64_t> r = sum ? checked_add(acc, x) : checked_mul(acc, x);
        if (!r) overflow(n, acc, x, sum ? "+" : "*");
        acc = *r;
      });
      return acc;
    }
    case NodeOp::kMaxSeq:
    case NodeOp::kMinSeq: {
      bool is_max = n.op == NodeOp::kMaxSeq;
      std::optional<std::int64_t> best;
      each_int(*n.args[0], c, [&](std::int64_t x) { best = best ? pick(is_max, *best, x) : x; });
      if (best) return *best;
      if (n.args.size() > 1) return eval_int(*n.args[1], c);
      eval_fail(n, std::string(is_max ? "max" : "min") + "() of an empty sequence without default");
    }
    case NodeOp::kMaxArgs:
    case NodeOp::kMinArgs: {
      bool is_max = n.op == NodeOp::kMaxArgs;
      std::int64_t best = eval_int(*n.args[0], c);
      for (std::size_t i = 1; i < n.args.size(); ++i)
        best = pick(is_max, best, eval_int(*n.args[i], c));
      return best;
    }
    case NodeOp::kCeilDiv:
      return ceil_div(n, c);
    case NodeOp::kNormalizeAxis: {
      std::int64_t a = eval_int(*n.args[0], c);
      std::int64_t rank = eval_int(*n.args[1], c);
      std::optional<std::int64_t> r = normalize_axis(a, rank);
      if (!r)
        eval_fail(
            n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
      return *r;
    }
    case NodeOp::kBytes:
      return bytes(n, c);
    default:
      return eval_value_call(n, c).as_int();
  }
}

bool eval_bool_call(const Node& n, Ctx& c) {
  switch (n.op) {
    case NodeOp::kPresent: {
      const Value& v = c.frame[static_cast<std::size_t>(n.index)];
      return !v.is_none() && !(v.is_tensor() && !v.as_tensor().defined());
    }
    case NodeOp::kAll:
      return all_or_any(n, c, true);
    case NodeOp::kAny:
      return all_or_any(n, c, false);
    case NodeOp::kValidAxes:
    case NodeOp::kUniqueAxes: {
      Value scratch;
      const Value& d = axes_value(n, *n.args[0], c, scratch);
      std::int64_t rank = eval_int(*n.args[1], c);
      return n.op == NodeOp::kValidAxes ? valid_axes(d, rank) : unique_axes(d, rank);
    }
    case NodeOp::kRepresentable: {
      Value v = eval_value(*n.args[0], c);
      if (!v.is_number() && !v.is_bool())
        eval_fail(n, "representable() of a " + std::string(value_kind_name(v.kind())) + " value");
      return representable(v, eval_value(*n.args[1], c).as_dtype());
    }
    default:
      return eval_value_call(n, c).as_bool();
  }
}

Value eval_value_call(const Node& n, Ctx& c) {
  switch (n.op) {
    case NodeOp::kSum:
    case NodeOp::kProd: {
      bool sum = n.op == NodeOp::kSum;
      double acc = sum ? 0 : 1;
      each_float(*n.args[0], c, [&](double x) { acc = sum ? acc + x : acc * x; });
      return Value(acc);
    }
    case NodeOp::kMaxSeq:
    case NodeOp::kMinSeq: {
      bool is_max = n.op == NodeOp::kMaxSeq;
      std::optional<double> best;
      each_float(*n.args[0], c, [&](double x) { best = best ? pick(is_max, *best, x) : x; });
      if (best) return Value(*best);
      if (n.args.size() > 1) return Value(eval_float(*n.args[1], c));
      eval_fail(n, std::string(is_max ? "max" : "min") + "() of an empty sequence without default");
    }
    case NodeOp::kMaxArgs:
    case NodeOp::kMinArgs: {
      bool is_max = n.op == NodeOp::kMaxArgs;
      double best = eval_float(*n.args[0], c);
      for (std::size_t i = 1; i < n.args.size(); ++i)
        best = pick(is_max, best, eval_float(*n.args[i], c));
      return Value(best);
    }
    case NodeOp::kBroadcast: {
      Shape tmp;
      Shape out = eval_shape(*n.args[0], c, tmp);
      for (std::size_t i = 1; i < n.args.size(); ++i) {
        const Shape& next = eval_shape(*n.args[i], c, tmp);
        std::optional<Shape> b = broadcast_shapes(out, next);
        if (!b) eval_fail(n, "shapes " + out.str() + " and " + next.str() + " do not broadcast");
        out = std::move(*b);
      }
      return Value(std::move(out));
    }
    case NodeOp::kReduced: {
      Shape tmp;
      const Shape& s = eval_shape(*n.args[0], c, tmp);
      Value dim_scratch;
      const Value& dim = axes_value(n, *n.args[1], c, dim_scratch);
      bool keepdim = eval_bool(*n.args[2], c);
      Value mode_scratch;
      const Value& mode = eval_ref(*n.args[3], c, mode_scratch);
      ReduceFailure why;
      std::optional<Shape> r = reduced_shape(s, dim, keepdim, mode.as_str(), why);
      if (r) return Value(std::move(*r));
      std::int64_t rank = static_cast<std::int64_t>(s.size());
      switch (why.why) {
        case ReduceFailure::kAxisRange:
          eval_fail(n, "axis " + std::to_string(why.axis) + " is out of range for rank " +
                           std::to_string(rank));
        case ReduceFailure::kDuplicate:
          eval_fail(n, "axis " + std::to_string(why.axis) + " appears more than once");
        case ReduceFailure::kEmptyRejected:
          eval_fail(n, "an empty dim list is not allowed");
        default:
          eval_fail(n, "mode must be 'full', 'noop' or 'reject', got '" + mode.as_str() + "'");
      }
    }
    case NodeOp::kPromoteIntToFloat: {
      DType t = eval_value(*n.args[0], c).as_dtype();
      return Value(is_floating(t) ? t : DType::kFloat32);
    }
    case NodeOp::kCoalesceDType: {
      Value v = eval_value(*n.args[0], c);
      return v.is_none() ? eval_value(*n.args[1], c) : v;
    }
    case NodeOp::kCategory: {
      Value v = eval_value(*n.args[0], c);
      std::optional<std::string_view> cat = category_of(v);
      if (!cat)
        eval_fail(n, "category() of a " + std::string(value_kind_name(v.kind())) + " value");
      return Value(*cat);
    }
    default:
      break;
  }
  // Every node kind is handled above or by eval_int/eval_bool; reaching here is a compiler bug.
  eval_fail(n, "internal error: no evaluation for this node");
}

}  // namespace tileops::expr::detail
