// A Scope with a name of every kind and a frame to match, shared by the expression tests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/tensor.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::expr::testing {

struct ExprFixture {
  Scope scope;
  std::vector<Value> frame;

  ExprFixture() {
    add("M", {Kind::kInt, false}, NameRole::kIndex, Value(std::int64_t{6}));
    add("N", {Kind::kInt, false}, NameRole::kIndex, Value(std::int64_t{4}));
    add("big", {Kind::kInt, false}, NameRole::kParam, Value(std::int64_t{1} << 62));
    add("S", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{2, 3, 4}));
    add("A", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{8, 1, 5}));
    add("B", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{7, 1}));
    add("E", {Kind::kIntSeq, false}, NameRole::kIndex, Value(Shape{}));
    add("T", {Kind::kDType, false}, NameRole::kIndex, Value(DType::kBFloat16));
    add("U", {Kind::kDType, false}, NameRole::kIndex, Value(DType::kInt32));
    add("out_dtype", {Kind::kDType, true}, NameRole::kParam, Value());
    add("eps", {Kind::kFloat, true}, NameRole::kParam, Value(1e-5));
    add("limit", {Kind::kInt, true}, NameRole::kParam, Value());
    add("scale", {Kind::kFloat, false}, NameRole::kParam, Value(0.5));
    add("alpha", {Kind::kAny, false}, NameRole::kParam, Value(std::int64_t{2}));
    add("flag", {Kind::kBool, false}, NameRole::kParam, Value(true));
    add("mode", {Kind::kStr, false}, NameRole::kParam, Value("neox"));
    add("dim", {Kind::kAny, true}, NameRole::kParam, Value(Shape{-1}));
    add("nodim", {Kind::kAny, true}, NameRole::kParam, Value());
    add("ws", {Kind::kFloatSeq, false}, NameRole::kParam, Value(std::vector<double>{0.5, 1.5}));
    add("x", {Kind::kTensor, false}, NameRole::kTensor,
        Value(Tensor::meta(Shape{2, 3, 5}, DType::kFloat16)));
    add("w", {Kind::kTensor, true}, NameRole::kTensor, Value());
    add("q", {Kind::kTensor, true}, NameRole::kTensor,
        Value(Tensor::meta(Shape{3, 3}, DType::kFloat8E4M3FN)));
    add("half", {Kind::kInt, false}, NameRole::kLet, Value(std::int64_t{2}));
  }

  void add(std::string name, Type type, NameRole role, Value v) {
    int slot = scope.declare(std::move(name), type, role);
    if (static_cast<std::size_t>(slot) >= frame.size())
      frame.resize(static_cast<std::size_t>(slot) + 1);
    frame[static_cast<std::size_t>(slot)] = std::move(v);
  }
  void set(std::string_view name, Value v) {
    frame[static_cast<std::size_t>(scope.find(name)->slot)] = std::move(v);
  }

  Value eval(std::string_view src, CompileOptions options = {}) const {
    return compile(src, scope, options).eval(frame);
  }
  std::int64_t eval_int(std::string_view src) const { return eval(src).as_int(); }
  bool eval_bool(std::string_view src) const { return eval(src).as_bool(); }
  Shape eval_shape(std::string_view src) const { return eval(src).as_int_list(); }

  // The EvalError message, or "<no error>".
  std::string eval_error(std::string_view src, CompileOptions options = {}) const {
    Program p = compile(src, scope, options);
    try {
      p.eval(frame);
    } catch (const EvalError& e) {
      return e.what();
    }
    return "<no error>";
  }
  // The ExprError message from compiling (parse included), or "<no error>".
  std::string compile_error(std::string_view src, CompileOptions options = {}) const {
    try {
      compile(src, scope, options);
    } catch (const ExprError& e) {
      return e.what();
    }
    return "<no error>";
  }
  Type type(std::string_view src) const { return compile(src, scope).type(); }
};

}  // namespace tileops::expr::testing
