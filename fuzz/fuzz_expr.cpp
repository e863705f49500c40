// libFuzzer target for the expression language: any input must parse or raise ExprError, and
// whatever parses must round-trip through unparse, compile against a fixed Scope or raise
// ExprError, and evaluate on a fixed frame or raise a tileops::Error. Crashes, hangs, leaks and
// sanitizer reports are the findings.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/expr.hpp"

namespace {

using namespace tileops;
using namespace tileops::expr;

// A few names of every kind, with values that make arithmetic and shapes interesting.
struct Fixture {
  Scope scope;
  std::vector<Value> frame;

  Fixture() {
    add("M", {Kind::kInt, false}, NameRole::kIndex, Value(std::int64_t{6}));
    add("N", {Kind::kInt, false}, NameRole::kIndex, Value(std::int64_t{0}));
    add("big", {Kind::kInt, false}, NameRole::kParam, Value(std::int64_t{1} << 62));
    add("S", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{2, 3, 4}));
    add("B", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{1, 0, 1, 1, 1, 1, 7}));
    add("E", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{}));
    add("T", {Kind::kDType, false}, NameRole::kIndex, Value(DType::kBFloat16));
    add("out_dtype", {Kind::kDType, true}, NameRole::kParam, Value());
    add("eps", {Kind::kFloat, true}, NameRole::kParam, Value(1e-5));
    add("limit", {Kind::kInt, true}, NameRole::kParam, Value());
    add("scale", {Kind::kFloat, false}, NameRole::kParam, Value(-0.5));
    add("alpha", {Kind::kAny, false}, NameRole::kParam, Value(std::int64_t{2}));
    add("flag", {Kind::kBool, false}, NameRole::kParam, Value(true));
    add("mode", {Kind::kStr, false}, NameRole::kParam, Value("neox"));
    add("dim", {Kind::kAny, true}, NameRole::kParam, Value(Shape{-1, 0}));
    add("ws", {Kind::kFloatSeq, false}, NameRole::kParam, Value(std::vector<double>{0.5, 1e300}));
    add("tup", {Kind::kTuple, false}, NameRole::kLet,
        Value(ValueTuple{Value(std::int64_t{1}), Value("a"), Value(true)}));
    add("x", {Kind::kTensor, false}, NameRole::kTensor,
        Value(Tensor::meta(Shape{2, 3, 5}, DType::kFloat16)));
    add("w", {Kind::kTensor, true}, NameRole::kTensor, Value());
  }

  void add(std::string name, Type type, NameRole role, Value v) {
    scope.declare(std::move(name), type, role);
    frame.push_back(std::move(v));
  }
};

// The round-trip property: whatever parse() accepts prints as text that parse() accepts again and
// that prints the same (the canonical form is a fixed point). Both of the parser's limits, on
// length and on nesting, hold for the canonical form too (Note [Expression limits] in
// src/manifest/expr/parser.cpp), so an ExprError here is a finding, not a limit: it escapes and
// libFuzzer reports it.
void check_round_trip(const Ast& ast) {
  std::string text = unparse(ast);
  AstPtr again = parse(text);
  if (unparse(*again) != text) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture fixture;
  std::string_view source(reinterpret_cast<const char*>(data), size);
  AstPtr ast;
  try {
    ast = parse(source);
  } catch (const ExprError&) {
    return 0;
  }
  check_round_trip(*ast);
  (void)free_names(*ast);
  for (bool allow_bytes : {false, true}) {
    try {
      Program p = compile(*ast, source, fixture.scope, {allow_bytes});
      (void)p.eval(fixture.frame);
    } catch (const tileops::Error&) {
    }
  }
  return 0;
}
