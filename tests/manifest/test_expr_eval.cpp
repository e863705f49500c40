// Evaluation of operators: exact int64 arithmetic with overflow errors, Python's floor division,
// comparisons (chained, mixed, dtype against names), short-circuit, subscripts and generators.

#include <gtest/gtest.h>

#include <cmath>

#include "expr_test_scope.hpp"

namespace tileops::expr {
namespace {

using testing::ExprFixture;

class ExprEval : public ExprFixture, public ::testing::Test {};

TEST_F(ExprEval, IntegerArithmetic) {
  EXPECT_EQ(eval_int("M * N + 1"), 25);
  EXPECT_EQ(eval_int("M - N * 3"), -6);
  EXPECT_EQ(eval_int("-M"), -6);
  EXPECT_EQ(eval_int("+M"), 6);
  EXPECT_EQ(eval_int("7 // 2"), 3);
  EXPECT_EQ(eval_int("-7 // 2"), -4);
  EXPECT_EQ(eval_int("7 // -2"), -4);
  EXPECT_EQ(eval_int("-7 // -2"), 3);
  EXPECT_EQ(eval_int("-7 % 3"), 2);
  EXPECT_EQ(eval_int("7 % -3"), -2);
  EXPECT_EQ(eval_int("-7 % -3"), -1);
  EXPECT_EQ(eval_int("-9223372036854775807 - 1"), INT64_MIN);
  EXPECT_EQ(eval_int("(-9223372036854775807 - 1) % -1"), 0);
}

TEST_F(ExprEval, IntegerOverflowIsAnError) {
  EXPECT_EQ(eval_error("big * 2"), "integer overflow in 'big * 2' (4611686018427387904 * 2)");
  EXPECT_EQ(eval_error("big + big"),
            "integer overflow in 'big + big' (4611686018427387904 + 4611686018427387904)");
  EXPECT_EQ(eval_error("-big - big - big"),
            "integer overflow in '-big - big - big' (-9223372036854775808 - 4611686018427387904)");
  EXPECT_EQ(eval_error("-(-big - big)"),
            "integer overflow in '-(-big - big)' (-(-9223372036854775808))");
  EXPECT_EQ(eval_error("(-big - big) // -1"),
            "integer overflow in '(-big - big) // -1' (-9223372036854775808 // -1)");
  EXPECT_EQ(eval_error("prod((big, 4))"),
            "integer overflow in 'prod((big, 4))' (4611686018427387904 * 4)");
  EXPECT_EQ(
      eval_error("sum(big for i in (1, 2))"),
      "integer overflow in 'sum(big for i in (1, 2))' (4611686018427387904 + 4611686018427387904)");
}

TEST_F(ExprEval, DivisionByZero) {
  EXPECT_EQ(eval_error("M // (N - 4)"), "division by zero in 'M // (N - 4)'");
  EXPECT_EQ(eval_error("M % 0"), "division by zero in 'M % 0'");
  EXPECT_EQ(eval_error("scale // 0"), "division by zero in 'scale // 0'");
}

TEST_F(ExprEval, FloatArithmetic) {
  EXPECT_DOUBLE_EQ(eval("M * scale").as_float(), 3.0);
  EXPECT_DOUBLE_EQ(eval("scale + 1").as_float(), 1.5);
  EXPECT_DOUBLE_EQ(eval("-7.5 // 2").as_float(), -4.0);
  EXPECT_DOUBLE_EQ(eval("-7.5 % 2").as_float(), 0.5);
  EXPECT_DOUBLE_EQ(eval("7.5 % -2").as_float(), -0.5);
  EXPECT_TRUE(std::isinf(eval("-inf").as_float()));
  EXPECT_DOUBLE_EQ(eval("M if flag else scale").as_float(), 6.0);
  EXPECT_TRUE(eval("M if flag else scale").is_float());
}

TEST_F(ExprEval, Comparisons) {
  EXPECT_TRUE(eval_bool("1 < M <= 6 != N"));
  EXPECT_FALSE(eval_bool("1 < M < 6"));
  EXPECT_TRUE(eval_bool("scale < M"));
  EXPECT_TRUE(eval_bool("mode == 'neox'"));
  EXPECT_TRUE(eval_bool("'gptj' < mode"));
  EXPECT_TRUE(eval_bool("T == 'bfloat16'"));
  EXPECT_TRUE(eval_bool("'bfloat16' == T"));
  EXPECT_TRUE(eval_bool("T != float32"));
  EXPECT_TRUE(eval_bool("T in ('float16', 'bfloat16')"));
  EXPECT_TRUE(eval_bool("U not in ('float16', 'bfloat16')"));
  EXPECT_TRUE(eval_bool("S == (2, 3, 4)"));
  EXPECT_TRUE(eval_bool("S < (2, 4)"));
  EXPECT_TRUE(eval_bool("E == ()"));
  EXPECT_TRUE(eval_bool("3 in S and 5 not in S"));
  EXPECT_TRUE(eval_bool("mode in ('neox', 'gptj')"));
  EXPECT_TRUE(eval_bool("1.5 in ws"));
  EXPECT_TRUE(eval_bool("(T == 'float8_e4m3fn') == present(w)"));
  EXPECT_TRUE(eval_bool("category(T) == 'float'"));
  EXPECT_TRUE(eval_bool("alpha == 2"));
  EXPECT_TRUE(eval_bool("alpha > 1.5"));
  set("alpha", Value("s"));
  EXPECT_EQ(eval_error("alpha > 1"), "cannot order str and int in 'alpha > 1'");
}

TEST_F(ExprEval, ShortCircuit) {
  // The right operand would fail if evaluated.
  EXPECT_FALSE(eval_bool("present(limit) and limit.value > 0"));
  EXPECT_TRUE(eval_bool("not present(limit) or limit.value != 0"));
  EXPECT_FALSE(eval_bool("M < 0 < M // 0"));
  EXPECT_EQ(eval_int("M if flag else M // 0"), 6);
  // A generator stops at the first deciding item (its iterable is built first, as in Python).
  EXPECT_FALSE(eval_bool("all(M // n > 0 for n in (1, 100, 0))"));
  EXPECT_TRUE(eval_bool("any(M // n > 0 for n in (1, 0))"));
  EXPECT_EQ(eval_error("limit.value + 1"), "'limit' is None in 'limit.value'");
  set("limit", Value(std::int64_t{3}));
  EXPECT_EQ(eval_int("limit.value + 1"), 4);
  EXPECT_EQ(eval("limit.value if present(limit) else None").as_int(), 3);
  set("limit", Value());
  EXPECT_TRUE(eval("limit.value if present(limit) else None").is_none());
}

TEST_F(ExprEval, SubscriptsAndSlices) {
  EXPECT_EQ(eval_int("S[0] + S[-1]"), 6);
  EXPECT_EQ(eval_shape("S[1:]"), (Shape{3, 4}));
  EXPECT_EQ(eval_shape("S[:-1]"), (Shape{2, 3}));
  EXPECT_EQ(eval_shape("S[-10:10]"), (Shape{2, 3, 4}));
  EXPECT_EQ(eval_shape("S[2:1]"), (Shape{}));
  EXPECT_EQ(eval_shape("S + (M, N) + E"), (Shape{2, 3, 4, 6, 4}));
  EXPECT_EQ(eval_int("(M, 'a')[0]"), 6);  // a constant-folded tuple still indexes
  EXPECT_EQ(eval("(mode, M)[0]").as_str(), "neox");
  EXPECT_DOUBLE_EQ(eval("ws[-1]").as_float(), 1.5);
  EXPECT_EQ(eval("ws[1:]").as_float_list(), (std::vector<double>{1.5}));
  EXPECT_EQ(eval_error("S[3]"), "index 3 is out of range for length 3 in 'S[3]'");
  EXPECT_EQ(eval_error("S[-4]"), "index -4 is out of range for length 3 in 'S[-4]'");
  EXPECT_EQ(eval_error("E[0]"), "index 0 is out of range for length 0 in 'E[0]'");
}

TEST_F(ExprEval, Generators) {
  EXPECT_EQ(eval_int("sum(n * n for n in S)"), 29);
  EXPECT_EQ(eval_int("sum(1 if n == 0 else 0 for n in (0, M, 0))"), 2);
  EXPECT_EQ(eval_int("max(n for n in S)"), 4);
  EXPECT_EQ(eval_int("min(n - 10 for n in S)"), -8);
  EXPECT_EQ(eval_int("max((n for n in E), default=7)"), 7);
  EXPECT_TRUE(eval_bool("all(n > 0 for n in S)"));
  EXPECT_TRUE(eval_bool("all(n > 0 for n in E)"));
  EXPECT_FALSE(eval_bool("any(n > 0 for n in E)"));
  // Nested generators see the outer variable.
  EXPECT_EQ(eval_int("sum(sum(a * b for b in S) for a in S)"), 81);
  EXPECT_DOUBLE_EQ(eval("sum(v * 2 for v in ws)").as_float(), 4.0);
  EXPECT_TRUE(eval_bool("all(v == 'a' or v == 1 for v in ('a', 1))"));
}

TEST_F(ExprEval, ReadsOnlyTheFrame) {
  Program p = compile("M * N", scope);
  std::vector<Value> other = frame;
  other[static_cast<std::size_t>(scope.find("M")->slot)] = Value(std::int64_t{10});
  EXPECT_EQ(p.eval(other).as_int(), 40);
  EXPECT_EQ(p.eval(frame).as_int(), 24);
  Program copy = p;
  EXPECT_EQ(copy.eval(frame).as_int(), 24);
  std::vector<Value> tiny(1);
  EXPECT_EQ(std::string(([&] {
              try {
                p.eval(tiny);
              } catch (const EvalError& e) {
                return std::string(e.what());
              }
              return std::string();
            })()),
            "'M * N' reads slot 1 of a frame with 1 slots");
}

}  // namespace
}  // namespace tileops::expr
