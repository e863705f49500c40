// Construction-time tensors at the call (docs/seeds.md, class-structure Table 2, running group: a
// construction-time tensor whose device or dtype differs from the call's is converted at the call
// and written back to the instance; Note [Ctor tensor dtypes], Note [Placing construction-time
// tensors]).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tileops/core/numeric.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

// y = x * table (per column) [+ bias]. table carries T, the call's dtype; bias carries R, its own.
constexpr std::string_view kTableScaleEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, T: "DType[float16 | bfloat16 | float32]", R: "DType[float32 | float64]"}
    params:
      table: {dtype: T, shape: "[N]"}
      bias: {dtype: R, shape: "[N]", optional: true}
    inputs:
      x: {dtype: T, shape: "[M, N]"}
    outputs:
      y: {dtype: T, shape: "[M, N]"}
  workloads: [{label: w, M: 2, N: 3, dtype_cases: [{T: float32, R: float32}]}]
  roofline: {flops: "M * N"}
)yaml";

const OpClass& table_scale_class() {
  static const OpClass& cls = toy_class("TableScaleFwdOp", kTableScaleEntry);
  return cls;
}

class TableScaleOp final : public Op {
 public:
  explicit TableScaleOp(Tensor table, std::optional<Tensor> bias = std::nullopt)
      : Op(table_scale_class(), {}, std::nullopt,
           std::vector<std::optional<Tensor>>{std::move(table), std::move(bias)}) {}

  Tensor operator()(const Tensor& x, const CallOptions& options = {}) {
    const std::optional<Tensor> inputs[] = {x};
    return *call(inputs, options).at(0);
  }
  // The construction-time tensors the last forward received.
  std::vector<std::optional<Tensor>> seen;

 protected:
  CallResult forward(const CallArgs& args) override {
    seen.assign(args.ctor_tensors.begin(), args.ctor_tensors.end());
    const Tensor& x = args.input(0);
    const Tensor& table = *args.ctor_tensors[0];
    Tensor y = allocate_output(args, 0);
    const std::int64_t m = x.shape()[0], n = x.shape()[1];
    const auto* xb = static_cast<const std::byte*>(x.data_ptr());
    const auto* tb = static_cast<const std::byte*>(table.data_ptr());
    auto* yb = static_cast<std::byte*>(y.data_ptr());
    const std::size_t xs = x.itemsize(), ts = table.itemsize();
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < n; ++c) {
        // The product is formed in T by the tensor's own dtype, as a T kernel would.
        const double v = load_as_double(x.dtype(), xb + (r * n + c) * xs) *
                         load_as_double(table.dtype(), tb + c * ts);
        store_from_double(y.dtype(), v, yb + (r * n + c) * xs);
      }
    return {y};
  }
};

Tensor random_cpu(const Shape& shape, DType dtype, std::mt19937& rng) {
  Tensor t = Tensor::empty(shape, dtype);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  auto* p = static_cast<std::byte*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    store_from_double(dtype, dist(rng), p + i * t.itemsize());
  return t;
}

double at(const Tensor& t, std::int64_t i) {
  return load_as_double(t.dtype(), static_cast<const std::byte*>(t.data_ptr()) + i * t.itemsize());
}

TEST(CtorTensors, CastToTheCallDtypeFromTheGivenTensor) {
  std::mt19937 rng(7);
  Tensor table = random_cpu({5}, DType::kFloat32, rng);
  TableScaleOp op(table);
  Tensor x = random_cpu({3, 5}, DType::kFloat16, rng);
  Tensor y = op(x);
  ASSERT_EQ(op.seen.size(), 2u);
  ASSERT_TRUE(op.seen[0]);
  EXPECT_EQ(op.seen[0]->dtype(), DType::kFloat16);
  EXPECT_FALSE(op.seen[1]);
  EXPECT_EQ(op.last_call()->tensor("table").dtype, DType::kFloat16);
  EXPECT_EQ(op.last_call()->index("T"), Value(DType::kFloat16));
  // Oracle: the table rounded to float16 (round to nearest even), the product rounded to float16.
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t c = 0; c < 5; ++c) {
      const double t16 =
          static_cast<double>(float16_bits_to_float(double_to_float16_bits(at(table, c))));
      const double want = static_cast<double>(
          float16_bits_to_float(double_to_float16_bits(at(x, r * 5 + c) * t16)));
      EXPECT_EQ(at(y, r * 5 + c), want) << r << "," << c;
    }
}

TEST(CtorTensors, ConversionIsWrittenBackAndReusedForTheSameDtype) {
  std::mt19937 rng(8);
  TableScaleOp op(random_cpu({4}, DType::kFloat32, rng));
  op(random_cpu({2, 4}, DType::kBFloat16, rng));
  const auto first = op.seen[0]->storage();
  op(random_cpu({6, 4}, DType::kBFloat16, rng));
  EXPECT_EQ(op.seen[0]->storage(), first) << "the second bfloat16 call converted the table again";
}

TEST(CtorTensors, EachConversionStartsFromTheGivenTensor) {
  std::mt19937 rng(9);
  Tensor table = random_cpu({4}, DType::kFloat32, rng);
  TableScaleOp op(table);
  op(random_cpu({2, 4}, DType::kBFloat16, rng));
  op(random_cpu({2, 4}, DType::kFloat32, rng));
  // float32 is the given dtype: the call gets the given tensor itself, not a widened bfloat16 copy.
  EXPECT_EQ(op.seen[0]->storage(), table.storage());
  op(random_cpu({2, 4}, DType::kFloat16, rng));
  for (std::int64_t c = 0; c < 4; ++c)
    EXPECT_EQ(at(*op.seen[0], c),
              static_cast<double>(float16_bits_to_float(double_to_float16_bits(at(table, c)))));
}

TEST(CtorTensors, OwnDtypeIndexIsFixedAtConstructionAndNotCast) {
  std::mt19937 rng(10);
  Tensor bias = random_cpu({4}, DType::kFloat64, rng);
  TableScaleOp op(random_cpu({4}, DType::kFloat32, rng), bias);
  op(random_cpu({2, 4}, DType::kFloat16, rng));
  ASSERT_TRUE(op.seen[1]);
  EXPECT_EQ(op.seen[1]->storage(), bias.storage());
  EXPECT_EQ(op.last_call()->tensor("bias").dtype, DType::kFloat64);
  EXPECT_EQ(op.last_call()->index("R"), Value(DType::kFloat64));
}

TEST(CtorTensors, DtypeOutsideTheIndexSetFailsAtConstruction) {
  EXPECT_EQ(
      test_common::error_of<CheckError>([] { TableScaleOp op(Tensor::empty({4}, DType::kInt32)); }),
      "TableScaleFwdOp: table dtype is outside [float16, bfloat16, float32]; got int32");
}

TEST(CtorTensors, ShapeIsStillFixedAtConstruction) {
  std::mt19937 rng(11);
  TableScaleOp op(random_cpu({4}, DType::kFloat32, rng));
  EXPECT_EQ(test_common::error_of<CheckError>([&] {
              op(random_cpu({2, 5}, DType::kFloat32, rng));
            }),
            "TableScaleFwdOp: x shape does not match N: axis 1 is 5, expected 4");
}

TEST(CtorTensors, MetaCallConvertsNothing) {
  std::mt19937 rng(12);
  Tensor table = random_cpu({4}, DType::kFloat32, rng);
  TableScaleOp op(table);
  Tensor y = op(Tensor::meta({2, 4}, DType::kBFloat16));
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.dtype(), DType::kBFloat16);
  EXPECT_TRUE(op.seen.empty()) << "the fake path ran forward";
  EXPECT_EQ(op.last_call()->tensor("table").dtype, DType::kBFloat16);
}

}  // namespace
}  // namespace tileops::optest
