// The primitives against the rules they mirror: PyTorch broadcasting and reduction shapes, axis
// normalisation, c10's scalar overflow rule, dtype promotion, presence and byte counts.

#include <gtest/gtest.h>

#include "expr_test_scope.hpp"

namespace tileops::expr {
namespace {

using testing::ExprFixture;

class ExprPrimitives : public ExprFixture, public ::testing::Test {};

TEST_F(ExprPrimitives, LenSumProdMaxMin) {
  EXPECT_EQ(eval_int("len(S)"), 3);
  EXPECT_EQ(eval_int("len(E)"), 0);
  EXPECT_EQ(eval_int("len(ws)"), 2);
  EXPECT_EQ(eval_int("len((1, 'a'))"), 2);
  EXPECT_EQ(eval_int("prod(S)"), 24);
  EXPECT_EQ(eval_int("prod(E)"), 1);
  EXPECT_EQ(eval_int("sum(E)"), 0);
  EXPECT_DOUBLE_EQ(eval("prod(ws)").as_float(), 0.75);
  EXPECT_EQ(eval_int("max(S)"), 4);
  EXPECT_EQ(eval_int("min(M, N, 5)"), 4);
  EXPECT_EQ(eval_int("max(E, default=-1)"), -1);
  EXPECT_DOUBLE_EQ(eval("max(M, scale)").as_float(), 6.0);
  EXPECT_EQ(eval_error("max(E)"), "max() of an empty sequence without default in 'max(E)'");
  EXPECT_TRUE(eval_bool("all((flag, True))"));
  EXPECT_FALSE(eval_bool("any((False, M < 0))"));
  EXPECT_EQ(eval_error("all((True, mode))"), "item 2 is not a bool in 'all((True, mode))'");
}

TEST_F(ExprPrimitives, CeilDiv) {
  EXPECT_EQ(eval_int("ceil_div(7, 2)"), 4);
  EXPECT_EQ(eval_int("ceil_div(8, 2)"), 4);
  EXPECT_EQ(eval_int("ceil_div(0, 5)"), 0);
  EXPECT_EQ(eval_int("ceil_div(-7, 2)"), -3);
  EXPECT_EQ(eval_int("ceil_div(big, 1)"), int64_t{1} << 62);
  EXPECT_EQ(eval_error("ceil_div(M, 0)"),
            "ceil_div divisor must be positive, got 0 in 'ceil_div(M, 0)'");
  EXPECT_EQ(eval_error("ceil_div(M, -2)"),
            "ceil_div divisor must be positive, got -2 in 'ceil_div(M, -2)'");
}

TEST_F(ExprPrimitives, BroadcastFollowsPyTorch) {
  EXPECT_EQ(eval_shape("broadcast(A, B)"), (Shape{8, 7, 5}));
  EXPECT_EQ(eval_shape("broadcast(S)"), (Shape{2, 3, 4}));
  EXPECT_EQ(eval_shape("broadcast(E, S)"), (Shape{2, 3, 4}));
  EXPECT_EQ(eval_shape("broadcast((1,), (0,))"), (Shape{0}));
  EXPECT_EQ(eval_shape("broadcast((5, 1), (1, 6), (4, 1, 1))"), (Shape{4, 5, 6}));
  EXPECT_EQ(broadcast_shapes(Shape{3}, Shape{4}), std::nullopt);
  EXPECT_EQ(eval_error("broadcast(S, (3,))"),
            "shapes [2, 3, 4] and [3] do not broadcast in 'broadcast(S, (3,))'");
}

TEST_F(ExprPrimitives, ReducedFollowsTorchSum) {
  EXPECT_EQ(eval_shape("reduced(S, dim, False, 'full')"), (Shape{2, 3}));
  EXPECT_EQ(eval_shape("reduced(S, dim, True, 'full')"), (Shape{2, 3, 1}));
  EXPECT_EQ(eval_shape("reduced(S, 0, False, 'full')"), (Shape{3, 4}));
  EXPECT_EQ(eval_shape("reduced(S, (0, -1), True, 'full')"), (Shape{1, 3, 1}));
  EXPECT_EQ(eval_shape("reduced(S, None, False, 'full')"), (Shape{}));
  EXPECT_EQ(eval_shape("reduced(S, nodim, True, 'full')"), (Shape{1, 1, 1}));
  EXPECT_EQ(eval_shape("reduced(S, (), False, 'full')"), (Shape{}));
  EXPECT_EQ(eval_shape("reduced(S, (), True, 'noop')"), (Shape{2, 3, 4}));
  EXPECT_EQ(eval_error("reduced(S, (), True, 'reject')"),
            "an empty dim list is not allowed in 'reduced(S, (), True, 'reject')'");
  // A rank-0 shape takes axis 0 or -1 and stays rank 0.
  EXPECT_EQ(eval_shape("reduced(E, 0, True, 'full')"), (Shape{}));
  EXPECT_EQ(eval_shape("reduced(E, -1, False, 'full')"), (Shape{}));
  EXPECT_EQ(eval_error("reduced(E, 1, False, 'full')"),
            "axis 1 is out of range for rank 0 in 'reduced(E, 1, False, 'full')'");
  EXPECT_EQ(eval_error("reduced(S, 3, False, 'full')"),
            "axis 3 is out of range for rank 3 in 'reduced(S, 3, False, 'full')'");
  EXPECT_EQ(eval_error("reduced(S, (1, -2), False, 'full')"),
            "axis 1 appears more than once in 'reduced(S, (1, -2), False, 'full')'");
  EXPECT_EQ(
      eval_error("reduced(S, dim, False, mode)"),
      "mode must be 'full', 'noop' or 'reject', got 'neox' in 'reduced(S, dim, False, mode)'");
  set("dim", Value("bad"));
  EXPECT_EQ(
      eval_error("reduced(S, dim, False, 'full')"),
      "dim must be None, an int or a list of ints, got str in 'reduced(S, dim, False, 'full')'");
}

TEST_F(ExprPrimitives, Axes) {
  EXPECT_TRUE(eval_bool("valid_axes(dim, len(S)) and unique_axes(dim, len(S))"));
  EXPECT_TRUE(eval_bool("valid_axes(nodim, 3)"));
  EXPECT_TRUE(eval_bool("valid_axes((-3, 2), 3)"));
  EXPECT_FALSE(eval_bool("valid_axes((3,), 3)"));
  EXPECT_FALSE(eval_bool("valid_axes(-4, 3)"));
  EXPECT_TRUE(eval_bool("valid_axes((0, -1), 0)"));
  EXPECT_FALSE(eval_bool("valid_axes(1, 0)"));
  EXPECT_FALSE(eval_bool("unique_axes((0, -3), 3)"));
  EXPECT_TRUE(eval_bool("unique_axes((0, 1), 3)"));
  EXPECT_TRUE(eval_bool("unique_axes(5, 3)"));
  EXPECT_EQ(eval_int("normalize_axis(-1, 3)"), 2);
  EXPECT_EQ(eval_int("normalize_axis(-1, 0)"), 0);
  EXPECT_EQ(eval_int("normalize_axis(0, 0)"), 0);
  EXPECT_EQ(eval_error("normalize_axis(3, 3)"),
            "axis 3 is out of range for rank 3 in 'normalize_axis(3, 3)'");
  EXPECT_EQ(eval_error("normalize_axis(1, 0)"),
            "axis 1 is out of range for rank 0 in 'normalize_axis(1, 0)'");
  EXPECT_EQ(normalize_axis(-4, 3), std::nullopt);
  EXPECT_EQ(normalize_axis(-3, 3), 0);
}

TEST_F(ExprPrimitives, DTypes) {
  EXPECT_EQ(eval("promote_int_to_float(T)").as_dtype(), DType::kBFloat16);
  EXPECT_EQ(eval("promote_int_to_float(U)").as_dtype(), DType::kFloat32);
  EXPECT_EQ(eval("promote_int_to_float(bool)").as_dtype(), DType::kFloat32);
  EXPECT_EQ(eval("coalesce_dtype(out_dtype, T)").as_dtype(), DType::kBFloat16);
  EXPECT_EQ(eval("coalesce_dtype(None, U)").as_dtype(), DType::kInt32);
  set("out_dtype", Value(DType::kFloat32));
  EXPECT_EQ(eval("coalesce_dtype(out_dtype, T)").as_dtype(), DType::kFloat32);
  EXPECT_EQ(eval("category(U)").as_str(), "int");
  EXPECT_EQ(eval("category(bool)").as_str(), "bool");
  EXPECT_EQ(eval("category(alpha)").as_str(), "int");
  EXPECT_EQ(eval("category(scale)").as_str(), "float");
  EXPECT_EQ(eval("category(flag)").as_str(), "bool");
  EXPECT_TRUE(eval_bool("category(alpha) == 'int' or category(alpha) == category(T)"));
  set("alpha", Value("s"));
  EXPECT_EQ(eval_error("category(alpha)"), "category() of a str value in 'category(alpha)'");
}

TEST_F(ExprPrimitives, RepresentableFollowsC10Overflows) {
  EXPECT_TRUE(eval_bool("representable(127, int8)"));
  EXPECT_FALSE(eval_bool("representable(128, int8)"));
  EXPECT_TRUE(eval_bool("representable(-128, int8)"));
  EXPECT_TRUE(eval_bool("representable(255, uint8)"));
  EXPECT_FALSE(eval_bool("representable(256, uint8)"));
  EXPECT_TRUE(eval_bool("representable(-255, uint8)"));  // wraps, as in PyTorch
  EXPECT_FALSE(eval_bool("representable(-256, uint8)"));
  EXPECT_TRUE(eval_bool("representable(1, bool)"));
  EXPECT_FALSE(eval_bool("representable(2, bool)"));
  EXPECT_TRUE(eval_bool("representable(2147483647, int32)"));
  EXPECT_FALSE(eval_bool("representable(2147483648, int32)"));
  EXPECT_TRUE(eval_bool("representable(big, int64)"));
  EXPECT_TRUE(eval_bool("representable(65504, float16)"));
  EXPECT_FALSE(eval_bool("representable(65505, float16)"));
  EXPECT_FALSE(eval_bool("representable(70000.0, float16)"));
  EXPECT_TRUE(eval_bool("representable(1e38, bfloat16)"));
  EXPECT_FALSE(eval_bool("representable(1e39, float32)"));
  EXPECT_TRUE(eval_bool("representable(1e39, float64)"));
  EXPECT_TRUE(eval_bool("representable(448.0, float8_e4m3fn)"));
  EXPECT_FALSE(eval_bool("representable(449.0, float8_e4m3fn)"));
  EXPECT_TRUE(eval_bool("representable(-inf, float16)"));
  EXPECT_TRUE(eval_bool("representable(inf, float8_e5m2)"));
  EXPECT_FALSE(eval_bool("representable(inf, float8_e4m3fn)"));  // no infinity in e4m3fn
  EXPECT_FALSE(eval_bool("representable(1.5, int32)"));
  EXPECT_FALSE(eval_bool("representable(1.0, int64)"));
  EXPECT_TRUE(eval_bool("representable(True, uint8)"));
  EXPECT_TRUE(eval_bool("representable(alpha, T)"));
  EXPECT_TRUE(eval_bool("representable(scale, U) == False"));
}

TEST_F(ExprPrimitives, PresentAndBytes) {
  EXPECT_TRUE(eval_bool("present(x)"));
  EXPECT_FALSE(eval_bool("present(w)"));
  EXPECT_TRUE(eval_bool("present(eps)"));
  EXPECT_FALSE(eval_bool("present(out_dtype)"));
  EXPECT_FALSE(eval_bool("present(nodim)"));
  CompileOptions roofline{true};
  EXPECT_EQ(eval("bytes(x)", roofline).as_int(), 60);  // 30 float16 elements
  EXPECT_EQ(eval("bytes(q)", roofline).as_int(), 9);   // 9 one-byte elements
  EXPECT_EQ(eval("bytes(x) + (bytes(w) if present(w) else 0)", roofline).as_int(), 60);
  EXPECT_EQ(eval_error("bytes(w)", roofline), "the tensor is absent in 'bytes(w)'");
}

}  // namespace
}  // namespace tileops::expr
