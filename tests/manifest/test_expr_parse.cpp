// Syntax of the expression language: precedence, literals, round trips through unparse, free
// names, and every rejected construct with its pinned message.

#include <gtest/gtest.h>

#include <string>

#include "tileops/manifest/expr.hpp"

namespace tileops::expr {
namespace {

std::string round(std::string_view src) { return unparse(*parse(src)); }

std::string parse_error(std::string_view src) {
  try {
    parse(src);
  } catch (const ExprError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ExprParse, PrecedenceFollowsPython) {
  EXPECT_EQ(round("a + b * c"), "a + b * c");
  EXPECT_EQ(round("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(round("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(round("a - b - c"), "a - b - c");
  EXPECT_EQ(round("-a * b"), "-a * b");
  EXPECT_EQ(round("-(a * b)"), "-(a * b)");
  EXPECT_EQ(round("not a == b"), "not a == b");
  EXPECT_EQ(round("not a and b or c"), "not a and b or c");
  EXPECT_EQ(round("a or b and c"), "a or b and c");
  EXPECT_EQ(round("(a or b) and c"), "(a or b) and c");
  EXPECT_EQ(round("x if c else y if d else z"), "x if c else y if d else z");
  EXPECT_EQ(round("(x if c else y) if d else z"), "(x if c else y) if d else z");
  EXPECT_EQ(round("a < b <= c != d"), "a < b <= c != d");
  EXPECT_EQ(round("a not in S"), "a not in S");
  EXPECT_EQ(round("S[1:][0]"), "S[1:][0]");
  EXPECT_EQ(round("S[:-1]"), "S[:-1]");
  EXPECT_EQ(round("S[:]"), "S[:]");
  EXPECT_EQ(round("x.value"), "x.value");
}

TEST(ExprParse, AstShape) {
  AstPtr a = parse("1 + 2 * 3");
  ASSERT_EQ(a->op, AstOp::kAdd);
  EXPECT_EQ(a->args[1]->op, AstOp::kMul);
  EXPECT_EQ(a->args[1]->column, 5);

  AstPtr c = parse("a < b == c");
  ASSERT_EQ(c->op, AstOp::kCompare);
  EXPECT_EQ(c->args.size(), 3u);
  EXPECT_EQ(c->cmp, (std::vector<CmpOp>{CmpOp::kLt, CmpOp::kEq}));

  AstPtr g = parse("sum(n for n in S)");
  ASSERT_EQ(g->op, AstOp::kCall);
  ASSERT_EQ(g->args.size(), 1u);
  EXPECT_EQ(g->args[0]->op, AstOp::kGenerator);
  EXPECT_EQ(g->args[0]->text, "n");

  AstPtr k = parse("max(S, default=0)");
  ASSERT_EQ(k->kwargs.size(), 1u);
  EXPECT_EQ(k->kwargs[0].first, "default");

  AstPtr s = parse("S[:2]");
  ASSERT_EQ(s->op, AstOp::kSlice);
  EXPECT_EQ(s->args[1]->op, AstOp::kNoneLit);
}

TEST(ExprParse, Literals) {
  EXPECT_EQ(parse("9223372036854775807")->int_value, 9223372036854775807);
  EXPECT_EQ(parse("1_000")->int_value, 1000);
  EXPECT_DOUBLE_EQ(parse("1e-6")->float_value, 1e-6);
  EXPECT_DOUBLE_EQ(parse(".5")->float_value, 0.5);
  EXPECT_DOUBLE_EQ(parse("2.")->float_value, 2.0);
  EXPECT_EQ(parse("1e-400")->float_value, 0.0);
  EXPECT_EQ(parse("True")->op, AstOp::kBoolLit);
  EXPECT_EQ(parse("None")->op, AstOp::kNoneLit);
  EXPECT_EQ(parse("\"a'b\"")->text, "a'b");
  EXPECT_EQ(parse("'a\\nb'")->text, "a\nb");
  EXPECT_EQ(round("inf"), "inf");
  EXPECT_EQ(round("-inf"), "-inf");
  EXPECT_EQ(round("1.5"), "1.5");
  EXPECT_EQ(round("1e-06"), "1e-06");
  EXPECT_EQ(round("3.0"), "3.0");
  EXPECT_EQ(round("()"), "()");
  EXPECT_EQ(round("(a,)"), "(a,)");
  EXPECT_EQ(round("(a, 'x', 2)"), "(a, 'x', 2)");
  EXPECT_EQ(round("'it\\'s'"), "'it\\'s'");
}

TEST(ExprParse, GeneratorForms) {
  EXPECT_EQ(round("all(d >= 0 for d in S)"), "all(d >= 0 for d in S)");
  EXPECT_EQ(round("max((n for n in S), default=1)"), "max((n for n in S), default=1)");
  EXPECT_EQ(round("sum(1 if n == 0 else 0 for n in S)"), "sum(1 if n == 0 else 0 for n in S)");
  EXPECT_EQ(round("(a > b for d in S)"), "(a > b for d in S)");
}

TEST(ExprParse, FreeNames) {
  EXPECT_EQ(free_names(*parse("a + b * a")), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(free_names(*parse("sum(n * k for n in S) + n")),
            (std::vector<std::string>{"S", "k", "n"}));
  EXPECT_EQ(free_names(*parse("T == float32 or present(w) and w.value > 0")),
            (std::vector<std::string>{"T", "w"}));
  EXPECT_EQ(free_names(*parse("max(S, default=d)")), (std::vector<std::string>{"S", "d"}));
}

TEST(ExprParse, RejectedConstructs) {
  EXPECT_EQ(parse_error("a / b"), "column 3: '/' is not supported (use '//')");
  EXPECT_EQ(parse_error("a ** 2"), "column 3: '**' is not supported");
  EXPECT_EQ(parse_error("a & b"), "column 3: bit operation '&' is not supported");
  EXPECT_EQ(parse_error("a | b"), "column 3: bit operation '|' is not supported");
  EXPECT_EQ(parse_error("a ^ b"), "column 3: bit operation '^' is not supported");
  EXPECT_EQ(parse_error("a << 1"), "column 3: bit operation '<<' is not supported");
  EXPECT_EQ(parse_error("a >> 1"), "column 3: bit operation '>>' is not supported");
  EXPECT_EQ(parse_error("~a"), "column 1: bit operation '~' is not supported");
  EXPECT_EQ(parse_error("lambda x: x"), "column 1: 'lambda' is not supported");
  EXPECT_EQ(parse_error("[1, 2]"), "column 1: list literals are not supported");
  EXPECT_EQ(parse_error("{1}"), "column 1: set and dict literals are not supported");
  EXPECT_EQ(parse_error("x.shape"), "column 3: attribute 'shape' is not supported (only '.value')");
  EXPECT_EQ(parse_error("(y := 3)"), "column 4: ':=' is not supported");
  EXPECT_EQ(parse_error("a is None"), "column 3: 'is' is not supported (use present() or '==')");
  EXPECT_EQ(parse_error("all(n for n in S if n)"),
            "column 18: 'if' in a generator expression is not supported");
  EXPECT_EQ(parse_error("all(n for n in S for m in S)"),
            "column 18: nested 'for' clauses are not supported");
  EXPECT_EQ(parse_error("sum(n for n, m in S)"),
            "column 12: a generator expression binds exactly one name");
  EXPECT_EQ(parse_error("max(n for n in S, default=0)"),
            "column 5: generator expression must be parenthesized");
  EXPECT_EQ(parse_error("*S"), "column 1: starred expressions are allowed only as shape axes");
  EXPECT_EQ(parse_error("f(*S)"), "column 3: starred arguments are not supported");
  EXPECT_EQ(parse_error("a @ b"), "column 3: '@' is not supported");
  EXPECT_EQ(parse_error("a = b"), "column 3: '=' is not supported (use '==')");
  EXPECT_EQ(parse_error("S[::2]"), "column 4: slice steps are not supported");
  EXPECT_EQ(parse_error("S[1, 2]"), "column 4: tuple subscripts are not supported");
  EXPECT_EQ(parse_error("S[0](1)"), "column 5: only primitives can be called");
  EXPECT_EQ(parse_error("yield x"), "column 1: 'yield' is not supported");
}

TEST(ExprParse, MalformedInput) {
  EXPECT_EQ(parse_error(""), "column 1: unexpected end of expression");
  EXPECT_EQ(parse_error("a +"), "column 4: unexpected end of expression");
  EXPECT_EQ(parse_error("(a"), "column 3: expected ')' but found end of expression");
  EXPECT_EQ(parse_error("a b"), "column 3: unexpected 'b'");
  EXPECT_EQ(parse_error("a, b"), "column 2: unexpected ','");
  EXPECT_EQ(parse_error("a if b"), "column 7: expected 'else' but found end of expression");
  EXPECT_EQ(parse_error("a $ b"), "column 3: unexpected character '$'");
  EXPECT_EQ(parse_error("a \xc3\xa9"), "column 3: unexpected byte 0xC3");
  EXPECT_EQ(parse_error("'abc"), "column 1: unterminated string literal");
  EXPECT_EQ(parse_error("'a\\qb'"), "column 3: unsupported escape '\\q' in a string literal");
  EXPECT_EQ(parse_error("99999999999999999999"),
            "column 1: integer literal '99999999999999999999' is out of range");
  EXPECT_EQ(parse_error("-9223372036854775808"),
            "column 2: integer literal '9223372036854775808' is out of range");
  EXPECT_EQ(parse_error("1e999"), "column 1: float literal '1e999' is not finite");
  EXPECT_EQ(parse_error("0x10"), "column 1: invalid number literal '0x10'");
  EXPECT_EQ(parse_error("1__0"), "column 1: invalid number literal '1__0'");
  EXPECT_EQ(parse_error("012"), "column 1: leading zeros are not allowed in '012'");
  EXPECT_EQ(parse_error("f(a=1, 2)"), "column 8: positional argument follows keyword argument");
  EXPECT_EQ(parse_error("f(a=1, a=2)"), "column 8: duplicate keyword argument 'a'");
  EXPECT_EQ(parse_error("x.1"), "column 2: unexpected '.1'");
}

TEST(ExprParse, Limits) {
  std::string deep(65, '(');
  deep += "1" + std::string(65, ')');
  EXPECT_EQ(parse_error(deep), "column 33: expression nests deeper than 64 levels");
  std::string ok(30, '(');
  ok += "1" + std::string(30, ')');
  EXPECT_NO_THROW(parse(ok));

  std::string chain = "1";
  for (int i = 0; i < 70; ++i) chain += " + 1";
  EXPECT_EQ(parse_error(chain), "column 1: expression nests deeper than 64 levels");

  std::string negs(100, '-');
  EXPECT_EQ(parse_error(negs + "1"), "column 64: expression nests deeper than 64 levels");

  std::string long_src(4097, ' ');
  EXPECT_EQ(parse_error(long_src), "column 1: expression is longer than 4096 characters (4097)");
}

// See Note [Expression limits]: whatever parse() accepts prints as text that parse() accepts again.
TEST(ExprParse, CanonicalFormIsBoundedLikeTheSource) {
  // 1445 ones are 2,891 characters as written and 4,335 as printed, with ", " between them: the
  // length of the expression fuzzer's finding, an expression that parse() accepted and then
  // refused in canonical form.
  auto ones = [](int n) {
    std::string s = "(1";
    for (int i = 1; i < n; ++i) s += ",1";
    return s + ")";
  };
  ASSERT_EQ(ones(1445).size(), 2891u);
  EXPECT_EQ(parse_error(ones(1445)),
            "column 1: expression is longer than 4096 characters in canonical form (4335)");
  std::string text = round(ones(1365));
  EXPECT_EQ(text.size(), 4095u);
  EXPECT_EQ(round(text), text);
  // Literals print in one form, which may be longer than the source's.
  EXPECT_EQ(round("1e5"), "1e+05");
  EXPECT_EQ(round(".5"), "0.5");
}

TEST(ExprParse, CanonicalFormNestsNoDeeperThanTheSource) {
  EXPECT_EQ(round("1 .value"), "1 .value");
  EXPECT_EQ(round("(1).value"), "1 .value");
  EXPECT_EQ(round("(2.5).value"), "2.5 .value");
  EXPECT_EQ(round("(-1).value"), "(-1).value");
  // 62 'not's take the Ast to the 64-level bound and the parser's recursion to 63 levels; brackets
  // around the number added two more levels of recursion, past the bound.
  std::string deep;
  for (int i = 0; i < 62; ++i) deep += "not ";
  deep += "1 .value";
  std::string text = round(deep);
  EXPECT_EQ(text, deep);
  EXPECT_EQ(round(text), text);
}

TEST(ExprParse, ErrorCarriesColumnAndDetail) {
  try {
    parse("a // / b");
    FAIL();
  } catch (const ExprError& e) {
    EXPECT_EQ(e.column(), 6);
    EXPECT_EQ(e.detail(), "'/' is not supported (use '//')");
    const ManifestError& base = e;
    EXPECT_STREQ(base.what(), "column 6: '/' is not supported (use '//')");
  }
}

}  // namespace
}  // namespace tileops::expr
