// Kind checking: result kinds, name resolution to slots, and the pinned messages of every
// rejected program.

#include <gtest/gtest.h>

#include "expr_test_scope.hpp"

namespace tileops::expr {
namespace {

using testing::ExprFixture;

class ExprCompile : public ExprFixture, public ::testing::Test {};

TEST_F(ExprCompile, ResultKinds) {
  EXPECT_EQ(type("M * N + 1"), (Type{Kind::kInt, false}));
  EXPECT_EQ(type("M * scale"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("M // 2 % 3"), (Type{Kind::kInt, false}));
  EXPECT_EQ(type("len(S) > 0 and flag"), (Type{Kind::kBool, false}));
  EXPECT_EQ(type("S + (M, N)"), (Type{Kind::kIntSeq, false}));
  EXPECT_EQ(type("(M, 'a')"), (Type{Kind::kTuple, false}));
  EXPECT_EQ(type("()"), (Type{Kind::kIntSeq, false}));
  EXPECT_EQ(type("S[1:]"), (Type{Kind::kIntSeq, false}));
  EXPECT_EQ(type("ws[0]"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("T"), (Type{Kind::kDType, false}));
  EXPECT_EQ(type("float32"), (Type{Kind::kDType, false}));
  EXPECT_EQ(type("out_dtype"), (Type{Kind::kDType, true}));
  EXPECT_EQ(type("eps.value"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("limit.value if present(limit) else None"), (Type{Kind::kInt, true}));
  EXPECT_EQ(type("M if flag else scale"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("category(T)"), (Type{Kind::kStr, false}));
  EXPECT_EQ(type("sum(ws)"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("max(S, default=0.5)"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("max(M, N)"), (Type{Kind::kInt, false}));
  EXPECT_EQ(type("min(M, scale)"), (Type{Kind::kFloat, false}));
  EXPECT_EQ(type("reduced(S, dim, True, 'full')"), (Type{Kind::kIntSeq, false}));
  EXPECT_EQ(type("promote_int_to_float(T)"), (Type{Kind::kDType, false}));
  EXPECT_EQ(type("coalesce_dtype(out_dtype, T)"), (Type{Kind::kDType, false}));
  EXPECT_EQ(type("sum(n * 2 for n in S)"), (Type{Kind::kInt, false}));
  EXPECT_EQ(type("sum(w * 2 for w in ws)"), (Type{Kind::kFloat, false}));
}

TEST_F(ExprCompile, ResolvesNamesToSlots) {
  Program p = compile("M * len(S) if present(w) else N", scope);
  std::vector<int> expect = {scope.find("M")->slot, scope.find("N")->slot, scope.find("S")->slot,
                             scope.find("w")->slot};
  std::sort(expect.begin(), expect.end());
  EXPECT_EQ(p.reads(), expect);
  EXPECT_EQ(p.source(), "M * len(S) if present(w) else N");
  EXPECT_TRUE(p.valid());
  EXPECT_FALSE(Program().valid());
  // A comprehension variable shadows a scope name and is not a read.
  Program g = compile("sum(M for M in S)", scope);
  EXPECT_EQ(g.reads(), std::vector<int>{scope.find("S")->slot});
}

TEST_F(ExprCompile, ScopeRedeclarationKeepsTheSlot) {
  Scope s;
  EXPECT_EQ(s.declare("a", {Kind::kInt, false}, NameRole::kIndex), 0);
  EXPECT_EQ(s.declare("b", {Kind::kInt, false}, NameRole::kIndex), 1);
  EXPECT_EQ(s.declare("a", {Kind::kFloat, false}, NameRole::kLet), 0);
  EXPECT_EQ(s.num_slots(), 2);
  EXPECT_EQ(s.find("a")->type.kind, Kind::kFloat);
  EXPECT_EQ(s.find("zz"), nullptr);
}

TEST_F(ExprCompile, TypeNames) {
  EXPECT_EQ(type_name({Kind::kIntSeq, false}), "IntSeq");
  EXPECT_EQ(type_name({Kind::kDType, true}), "DType | None");
  EXPECT_EQ(type_name({Kind::kNone, true}), "None");
}

TEST_F(ExprCompile, PrimitiveNames) {
  auto names = primitive_names();
  EXPECT_EQ(names.size(), 19u);
  EXPECT_EQ(names.front(), "present");
  EXPECT_EQ(names.back(), "bytes");
}

TEST_F(ExprCompile, NameErrors) {
  EXPECT_EQ(compile_error("M + zz"), "column 5: unknown name 'zz'");
  EXPECT_EQ(compile_error("foo(M)"), "column 1: unknown function 'foo'");
  EXPECT_EQ(compile_error("x + 1"),
            "column 1: tensor 'x' can be read only through present() or bytes()");
  EXPECT_EQ(compile_error("x"),
            "column 1: tensor 'x' can be read only through present() or bytes()");
  EXPECT_EQ(compile_error("eps * 2"),
            "column 1: 'eps' may be None: test present(eps) and read eps.value");
  EXPECT_EQ(compile_error("M.value"),
            "column 1: '.value' applies only to an optional param, not to 'M'");
  EXPECT_EQ(compile_error("w.value"),
            "column 1: '.value' applies only to an optional param, not to 'w'");
  EXPECT_EQ(compile_error("(n for n in S)"),
            "column 2: a generator expression is allowed only as the single argument of all, "
            "any, sum, max or min");
  EXPECT_EQ(compile_error("len(n for n in S)"),
            "column 5: a generator expression is allowed only as the single argument of all, "
            "any, sum, max or min");
}

TEST_F(ExprCompile, OperatorKindErrors) {
  EXPECT_EQ(compile_error("M + 'a'"), "column 1: '+' cannot apply to Int and Str");
  EXPECT_EQ(compile_error("S - S"), "column 1: '-' cannot apply to IntSeq and IntSeq");
  EXPECT_EQ(compile_error("S * 2"), "column 1: '*' cannot apply to IntSeq and Int");
  EXPECT_EQ(compile_error("-mode"), "column 1: unary '-' needs a number, got Str");
  EXPECT_EQ(compile_error("not M"), "column 1: 'not' needs a Bool operand, got Int");
  EXPECT_EQ(compile_error("flag and M"), "column 10: 'and' needs Bool operands, got Int ('M')");
  EXPECT_EQ(compile_error("M if N else 0"),
            "column 6: the condition of 'if' must be Bool, got Int ('N')");
  EXPECT_EQ(compile_error("M if flag else 'a'"),
            "column 1: the branches of 'if' have different kinds: Int and Str");
  EXPECT_EQ(compile_error("M[0]"), "column 1: cannot subscript Int ('M')");
  EXPECT_EQ(compile_error("S[scale]"), "column 3: a subscript must be Int, got Float");
  EXPECT_EQ(compile_error("S['a':]"), "column 3: slice bounds must be Int, got Str");
}

TEST_F(ExprCompile, ComparisonKindErrors) {
  EXPECT_EQ(compile_error("M == 'a'"), "column 1: cannot compare Int with Str using '=='");
  EXPECT_EQ(compile_error("T < U"), "column 1: dtypes compare only with '==' and '!=', got '<'");
  EXPECT_EQ(compile_error("T == 'floot32'"), "column 6: 'floot32' is not a dtype name");
  EXPECT_EQ(compile_error("T in ('float16', 'bf16')"), "column 18: 'bf16' is not a dtype name");
  EXPECT_EQ(compile_error("T == M"), "column 1: cannot compare DType with Int using '=='");
  EXPECT_EQ(compile_error("flag < flag"),
            "column 1: Bools compare only with '==' and '!=', got '<'");
  EXPECT_EQ(compile_error("M in N"), "column 1: 'in' needs a sequence on the right, got Int");
  EXPECT_EQ(compile_error("scale in S"), "column 1: cannot compare Float with IntSeq using 'in'");
  EXPECT_EQ(compile_error("M == None"),
            "column 1: comparison with None is not supported (use present())");
  EXPECT_EQ(compile_error("S < (1, 'a')"), "column 1: cannot compare IntSeq with Tuple using '<'");
}

TEST_F(ExprCompile, PrimitiveErrors) {
  EXPECT_EQ(compile_error("len(S, S)"), "column 1: len() takes 1 argument, got 2");
  EXPECT_EQ(compile_error("len(M)"), "column 5: len(): argument 1 must be a sequence, got Int");
  EXPECT_EQ(compile_error("reduced(S, dim, True)"), "column 1: reduced() takes 4 arguments, got 3");
  EXPECT_EQ(compile_error("reduced(S, dim, 1, 'full')"),
            "column 17: reduced(): argument 3 must be Bool, got Int");
  EXPECT_EQ(
      compile_error("reduced(S, mode, True, 'full')"),
      "column 12: reduced(): argument 2 must be an axis, a sequence of axes or None, got Str");
  EXPECT_EQ(compile_error("reduced(S, dim, True, 'all')"),
            "column 23: reduced(): argument 4 must be 'full', 'noop' or 'reject', got 'all'");
  EXPECT_EQ(compile_error("ceil_div(M, scale)"),
            "column 13: ceil_div(): argument 2 must be Int, got Float");
  EXPECT_EQ(compile_error("broadcast()"), "column 1: broadcast() takes at least 1 argument, got 0");
  EXPECT_EQ(compile_error("broadcast(S, M)"),
            "column 14: broadcast(): argument 2 must be IntSeq, got Int");
  EXPECT_EQ(compile_error("present(M)"),
            "column 9: present(): 'M' is neither a tensor nor optional (Int)");
  EXPECT_EQ(compile_error("present(eps.value)"),
            "column 9: present(): argument 1 must be a name, got 'eps.value'");
  EXPECT_EQ(compile_error("bytes(x)"), "column 1: bytes() is allowed only in roofline formulas");
  EXPECT_EQ(compile_error("bytes(M)", {true}),
            "column 7: bytes(): argument 1 must be a tensor name, got Int");
  EXPECT_EQ(compile_error("max()"),
            "column 1: max() takes a sequence or at least 2 numbers, got 0 arguments");
  EXPECT_EQ(compile_error("max(S, key=1)"),
            "column 1: max() takes only the keyword argument 'default', got 'key'");
  EXPECT_EQ(compile_error("min(M, N, default=1)"),
            "column 1: min(): 'default' is allowed only with a single sequence argument");
  EXPECT_EQ(compile_error("len(S, default=1)"), "column 1: len() takes no keyword arguments");
  EXPECT_EQ(compile_error("sum(M)"),
            "column 5: sum(): argument 1 must be a sequence of numbers or a generator, got Int");
  EXPECT_EQ(compile_error("all(S)"),
            "column 5: all(): argument 1 must be a generator or a tuple of Bools, got IntSeq");
  EXPECT_EQ(compile_error("all(n for n in S)"),
            "column 5: all(): the generator must yield Bools, got Int");
  EXPECT_EQ(compile_error("sum(n > 0 for n in S)"),
            "column 5: sum(): the generator must yield numbers, got Bool");
  EXPECT_EQ(compile_error("sum(n for n in M)"),
            "column 16: sum(): a generator must iterate over a sequence, got Int");
  EXPECT_EQ(compile_error("category(S)"),
            "column 10: category(): argument 1 must be a number, a Bool or a DType, got IntSeq");
  EXPECT_EQ(compile_error("representable(T, T)"),
            "column 15: representable(): argument 1 must be a number or a Bool, got DType");
  EXPECT_EQ(compile_error("coalesce_dtype(M, T)"),
            "column 16: coalesce_dtype(): argument 1 must be DType | None, got Int");
  EXPECT_EQ(compile_error("promote_int_to_float(mode)"),
            "column 22: promote_int_to_float(): argument 1 must be DType, got Str");
  EXPECT_EQ(compile_error("max(S, default='a')"),
            "column 16: max(): 'default' must be a number, got Str");
}

TEST_F(ExprCompile, ParseErrorsSurfaceThroughCompile) {
  EXPECT_EQ(compile_error("M / 2"), "column 3: '/' is not supported (use '//')");
}

}  // namespace
}  // namespace tileops::expr
