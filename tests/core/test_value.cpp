// Value kinds, accessors, Python-like repr and equality; ParamMap order, replacement and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/value.hpp"

namespace tileops {
namespace {

using Kind = Value::Kind;

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const CheckError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Value, KindsFollowTheConstructor) {
  EXPECT_EQ(Value().kind(), Kind::kNone);
  EXPECT_EQ(Value(nullptr).kind(), Kind::kNone);
  EXPECT_EQ(Value(true).kind(), Kind::kBool);
  EXPECT_EQ(Value(3).kind(), Kind::kInt);
  EXPECT_EQ(Value(std::int64_t{3}).kind(), Kind::kInt);
  EXPECT_EQ(Value(1.5).kind(), Kind::kFloat);
  EXPECT_EQ(Value("tanh").kind(), Kind::kStr);
  EXPECT_EQ(Value(std::string("tanh")).kind(), Kind::kStr);
  EXPECT_EQ(Value(std::string_view("tanh")).kind(), Kind::kStr);
  EXPECT_EQ(Value(DType::kBFloat16).kind(), Kind::kDType);
  EXPECT_EQ(Value({1, 2}).kind(), Kind::kIntList);
  EXPECT_EQ(Value(Shape{4096}).kind(), Kind::kIntList);
  EXPECT_EQ(Value(std::vector<double>{0.5}).kind(), Kind::kFloatList);
  EXPECT_EQ(Value(ValueTuple{1, "a"}).kind(), Kind::kTuple);
  EXPECT_EQ(Value(Tensor::meta({2}, DType::kFloat32)).kind(), Kind::kTensor);
  EXPECT_TRUE(Value(2).is_number());
  EXPECT_TRUE(Value(2.0).is_number());
  EXPECT_FALSE(Value(true).is_number());
}

TEST(Value, KindNames) {
  EXPECT_EQ(value_kind_name(Kind::kNone), "none");
  EXPECT_EQ(value_kind_name(Kind::kBool), "bool");
  EXPECT_EQ(value_kind_name(Kind::kInt), "int");
  EXPECT_EQ(value_kind_name(Kind::kFloat), "float");
  EXPECT_EQ(value_kind_name(Kind::kStr), "str");
  EXPECT_EQ(value_kind_name(Kind::kDType), "dtype");
  EXPECT_EQ(value_kind_name(Kind::kIntList), "list[int]");
  EXPECT_EQ(value_kind_name(Kind::kFloatList), "list[float]");
  EXPECT_EQ(value_kind_name(Kind::kTuple), "tuple");
  EXPECT_EQ(value_kind_name(Kind::kTensor), "tensor");
}

TEST(Value, AccessorsReturnTheHeldValue) {
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_EQ(Value(-7).as_int(), -7);
  EXPECT_EQ(Value(2.5).as_float(), 2.5);
  EXPECT_EQ(Value(3).as_float(), 3.0);  // ints widen
  EXPECT_EQ(Value("gelu").as_str(), "gelu");
  EXPECT_EQ(Value(DType::kFloat8E5M2).as_dtype(), DType::kFloat8E5M2);
  EXPECT_EQ(Value({4, 5}).as_int_list(), Shape({4, 5}));
  EXPECT_EQ(Value(std::vector<double>{1, 2}).as_float_list(), (std::vector<double>{1, 2}));
  EXPECT_EQ(Value(ValueTuple{1, 2.5}).as_tuple().size(), 2u);
  EXPECT_EQ(Value(Tensor::meta({2, 3}, DType::kInt8)).as_tensor().shape(), Shape({2, 3}));
}

TEST(Value, AccessorsNameBothKindsOnMismatch) {
  EXPECT_EQ(error_of([] { Value("x").as_int(); }), "expected int, got str");
  EXPECT_EQ(error_of([] { Value(1).as_bool(); }), "expected bool, got int");
  EXPECT_EQ(error_of([] { Value(true).as_int(); }), "expected int, got bool");
  EXPECT_EQ(error_of([] { Value(1.5).as_int(); }), "expected int, got float");
  EXPECT_EQ(error_of([] { Value().as_float(); }), "expected float, got none");
  EXPECT_EQ(error_of([] { Value(1).as_str(); }), "expected str, got int");
  EXPECT_EQ(error_of([] { Value("float32").as_dtype(); }), "expected dtype, got str");
  EXPECT_EQ(error_of([] { Value(std::vector<double>{}).as_int_list(); }),
            "expected list[int], got list[float]");
  EXPECT_EQ(error_of([] { Value({1}).as_float_list(); }), "expected list[float], got list[int]");
  EXPECT_EQ(error_of([] { Value({1}).as_tuple(); }), "expected tuple, got list[int]");
  EXPECT_EQ(error_of([] { Value(ValueTuple{}).as_tensor(); }), "expected tensor, got tuple");
  EXPECT_EQ(error_of([] { Value(Tensor()).as_dtype(); }), "expected dtype, got tensor");
}

TEST(Value, ReprIsPythonLike) {
  EXPECT_EQ(Value().repr(), "None");
  EXPECT_EQ(Value(true).repr(), "True");
  EXPECT_EQ(Value(false).repr(), "False");
  EXPECT_EQ(Value(-3).repr(), "-3");
  EXPECT_EQ(Value(1.5).repr(), "1.5");
  EXPECT_EQ(Value(2.0).repr(), "2.0");
  EXPECT_EQ(Value("tanh").repr(), "'tanh'");
  EXPECT_EQ(Value(DType::kBFloat16).repr(), "bfloat16");
  EXPECT_EQ(Value({1, 2}).repr(), "[1, 2]");
  EXPECT_EQ(Value(Shape()).repr(), "[]");
  EXPECT_EQ(Value(std::vector<double>{0.5, 1.0}).repr(), "[0.5, 1.0]");
  EXPECT_EQ(Value(ValueTuple{1, "a"}).repr(), "(1, 'a')");
  EXPECT_EQ(Value(ValueTuple{1}).repr(), "(1,)");
  EXPECT_EQ(Value(ValueTuple{}).repr(), "()");
  EXPECT_EQ(Value(ValueTuple{Value(ValueTuple{}), Value()}).repr(), "((), None)");
  EXPECT_EQ(Value(Tensor::meta({2, 3}, DType::kFloat32)).repr(),
            "Tensor(shape=[2, 3], dtype=float32, device=meta)");
  EXPECT_EQ(Value(Tensor()).repr(), "Tensor(undefined)");
}

TEST(Value, FloatReprMatchesPython) {
  EXPECT_EQ(float_repr(0.0), "0.0");
  EXPECT_EQ(float_repr(-0.0), "-0.0");
  EXPECT_EQ(float_repr(0.1), "0.1");
  EXPECT_EQ(float_repr(1e-6), "1e-06");
  EXPECT_EQ(float_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(float_repr(0.0001), "0.0001");
  EXPECT_EQ(float_repr(0.00012), "0.00012");
  EXPECT_EQ(float_repr(123.456), "123.456");
  EXPECT_EQ(float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(float_repr(1e16), "1e+16");
  EXPECT_EQ(float_repr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(float_repr(1e100), "1e+100");
  EXPECT_EQ(float_repr(-2.5e-300), "-2.5e-300");
  EXPECT_EQ(float_repr(5e-324), "5e-324");
  EXPECT_EQ(float_repr(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(float_repr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(float_repr(std::nan("")), "nan");
}

TEST(Value, StringReprMatchesPython) {
  EXPECT_EQ(string_repr(""), "''");
  EXPECT_EQ(string_repr("it's"), "\"it's\"");
  EXPECT_EQ(string_repr("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(string_repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(string_repr("a\\b\n\t\x01"), "'a\\\\b\\n\\t\\x01'");
  EXPECT_EQ(string_repr("caf\xc3\xa9"), "'caf\xc3\xa9'");
}

TEST(Value, EqualityComparesNumbersLikePython) {
  EXPECT_EQ(Value(), Value(nullptr));
  EXPECT_EQ(Value(3), Value(3.0));
  EXPECT_EQ(Value(3.0), Value(3));
  EXPECT_NE(Value(3), Value(3.5));
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  EXPECT_NE(Value(big), Value(static_cast<double>(big)));  // exact, not through a double
  EXPECT_NE(Value(std::numeric_limits<std::int64_t>::max()), Value(9223372036854775808.0));
  EXPECT_NE(Value(std::nan("")), Value(std::nan("")));
  EXPECT_NE(Value(0), Value(std::nan("")));
  EXPECT_NE(Value(true), Value(1));  // bools are their own kind
  EXPECT_NE(Value(1), Value("1"));
}

TEST(Value, EqualityComparesContainersElementwise) {
  EXPECT_EQ(Value("a"), Value(std::string("a")));
  EXPECT_NE(Value("a"), Value("b"));
  EXPECT_EQ(Value(DType::kInt8), Value(DType::kInt8));
  EXPECT_NE(Value(DType::kInt8), Value(DType::kUInt8));
  EXPECT_EQ(Value({1, 2}), Value(Shape{1, 2}));
  EXPECT_NE(Value({1, 2}), Value({1, 2, 3}));
  EXPECT_NE(Value({1, 2}), Value(ValueTuple{1, 2}));
  EXPECT_EQ(Value(std::vector<double>{1, 2}), Value(std::vector<double>{1, 2}));
  EXPECT_EQ(Value(ValueTuple{1, "a"}), Value(ValueTuple{1.0, "a"}));
  EXPECT_NE(Value(ValueTuple{1, "a"}), Value(ValueTuple{1, "b"}));
  const Value shared(ValueTuple{1});
  const Value copy = shared;
  EXPECT_EQ(shared, copy);
}

TEST(Value, TensorsAreEqualWhenTheyAreTheSameView) {
  const Tensor t = Tensor::empty({2, 3}, DType::kFloat32);
  EXPECT_EQ(Value(t), Value(t));
  EXPECT_NE(Value(t), Value(Tensor::empty({2, 3}, DType::kFloat32)));
  EXPECT_NE(Value(t), Value(t.as_strided({3}, {1}, 0)));
  EXPECT_EQ(Value(Tensor()), Value(Tensor()));
  EXPECT_NE(Value(Tensor()), Value(t));
}

TEST(ParamMap, KeepsInsertionOrderAndReplacesInPlace) {
  ParamMap params{{"dim", Value({4096})}, {"eps", 1e-6}};
  params.set("dtype", DType::kBFloat16).set("eps", 1e-5);
  ASSERT_EQ(params.size(), 3u);
  std::vector<std::string> names;
  for (const auto& [name, value] : params) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"dim", "eps", "dtype"}));
  EXPECT_EQ(params.at("eps").as_float(), 1e-5);
  EXPECT_TRUE(params.contains("dim"));
  EXPECT_FALSE(params.contains("Dim"));
  EXPECT_EQ(params.find("absent"), nullptr);
  EXPECT_EQ(params.repr(), "{'dim': [4096], 'eps': 1e-05, 'dtype': bfloat16}");
  EXPECT_EQ(ParamMap().repr(), "{}");
}

TEST(ParamMap, AtNamesTheMissingParamAndThePresentOnes) {
  const ParamMap params{{"dim", 3}, {"eps", 0.5}};
  EXPECT_EQ(error_of([&] { params.at("alpha"); }), "params: no param 'alpha' (have: dim, eps)");
  EXPECT_EQ(error_of([] { ParamMap().at("x"); }), "params: no param 'x' (have: none)");
}

TEST(ParamMap, RejectsDuplicateNamesAtConstruction) {
  EXPECT_EQ(error_of([] { ParamMap({{"a", 1}, {"a", 2}}); }), "params: 'a' is given twice");
}

}  // namespace
}  // namespace tileops
