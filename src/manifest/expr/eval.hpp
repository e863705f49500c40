// The evaluator's tree walk, shared by eval.cpp (operators) and eval_calls.cpp (primitives).
// Kinds are fixed at compile time, so Int and Bool nodes evaluate through eval_int/eval_bool
// without building a Value; IntSeq operands are read by reference from the frame when possible.
#pragma once

#include <cstdint>
#include <string>

#include "manifest/expr/node.hpp"

namespace tileops::expr::detail {

struct Ctx {
  Frame frame;
  // Comprehension variables by local index; set while their generator runs.
  const Value* locals[kMaxLocals];
};

Value eval_value(const Node& n, Ctx& c);
std::int64_t eval_int(const Node& n, Ctx& c);
bool eval_bool(const Node& n, Ctx& c);
double eval_float(const Node& n, Ctx& c);  // Int nodes widen
// An IntSeq node's value: a reference into the frame or a constant, or else computed into
// `scratch`.
const Shape& eval_shape(const Node& n, Ctx& c, Shape& scratch);

// A node's value without a copy when it is a constant, a frame slot or a local; otherwise
// computed into `scratch`.
const Value& eval_ref(const Node& n, Ctx& c, Value& scratch);

// Primitives (eval_calls.cpp); each returns the kind its node was compiled to.
std::int64_t eval_int_call(const Node& n, Ctx& c);
bool eval_bool_call(const Node& n, Ctx& c);
Value eval_value_call(const Node& n, Ctx& c);

// "<what> in '<node text>'".
[[noreturn]] void eval_fail(const Node& n, const std::string& what);

}  // namespace tileops::expr::detail
