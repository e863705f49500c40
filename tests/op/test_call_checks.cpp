// Calls the signature check refuses before anything else of the call happens: a `device` param
// that names no device (at construction), sizes that overflow int64 (Note [Sizes that overflow]
// in plan_check.cpp) and written tensors whose elements overlap (Note [Internal overlap] in
// shape.cpp). A target registered here shows that no kernel is built or run, and no target
// selected, for a refused call.
#include <gtest/gtest.h>

#include "tileops/ops/norm.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

// No call-time tensor; the output's size comes from the params (AlibiFwdOp's form).
constexpr std::string_view kCubeEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    params:
      heads: {type: int}
      n: {type: int}
      device: {type: str, kw_only: true}
    inputs: {}
    outputs:
      y: {dtype: float32, shape: "[heads, n, n]", buffer: out}
  workloads: [{label: w, heads: 2, n: 4, device: cpu}]
  roofline: {flops: "heads * n * n"}
)yaml";

// Two inputs broadcast into the output (AddFwdOp's form).
constexpr std::string_view kBroadcastEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {A: Shape, B: Shape, T: "DType[float16 | float32]"}
    inputs:
      a: {dtype: T, shape: "[*A]"}
      b: {dtype: T, shape: "[*B]"}
    outputs:
      y: {dtype: T, shape: "[*broadcast(A, B)]"}
  workloads: [{label: w, A: [2, 1], B: [1, 2], dtype_cases: [{T: float16}]}]
  roofline: {flops: "2"}
)yaml";

// A builder that counts what reaches it and whose kernels fail: a refused call must reach none.
struct Tripwire {
  std::atomic<int> builds{0};
  std::atomic<int> runs{0};
};

// A target of its own (claiming no device) whose builder for `op` trips `wire`.
Target tripwire_target(const std::string& op, std::shared_ptr<Tripwire> wire) {
  const std::string target = unique("tripwire");
  register_detector(target, [](const Device&) { return false; });
  register_kernel_builder(op, target,
                          [wire](std::span<const std::optional<TensorSpec>>, const ParamMap&) {
                            wire->builds++;
                            TargetKernel k;
                            k.run = [wire](const TargetCall&) -> CallResult {
                              wire->runs++;
                              throw std::runtime_error("the kernel ran");
                            };
                            return k;
                          });
  return Target::named(target);
}

// Every element of a view of `shape` is one element: stride 0 on every axis.
Tensor expanded(Shape shape, DType dtype = DType::kFloat16) {
  return cpu({1}, dtype).as_strided(shape, Shape::filled(shape.size(), 0), 0);
}

TEST(DeviceParam, ThatNamesNoDeviceFailsAtConstructionWithTheOpsName) {
  const std::string name = unique_op("Cube");
  const OpClass& cls = toy_class(name, kCubeEntry);
  EXPECT_EQ(error_of<CheckError>([&] {
              ToyOp op(cls, {{"heads", Value(2)}, {"n", Value(4)}, {"device", Value("tpu:0")}});
            }),
            name +
                ": param 'device' = 'tpu:0' is not a device; expected 'cpu', 'meta', 'cuda' or "
                "'cuda:<index>'");
  ToyOp op(cls, {{"heads", Value(2)}, {"n", Value(4)}, {"device", Value("meta")}});
  EXPECT_EQ(op.call(Inputs{}).at(0)->shape(), (Shape{2, 4, 4}));
  EXPECT_EQ(op.last_call()->device(), Device::meta());
}

TEST(SizesThatOverflow, ParamShapedOutputReachesNoTargetAndNoEmptyWrite) {
  const std::string name = unique_op("HugeCube");
  const OpClass& cls = toy_class(name, kCubeEntry);
  auto wire = std::make_shared<Tripwire>();
  const Target target = tripwire_target(name, wire);
  const std::int64_t n = std::int64_t{1} << 31;
  // 3 * 2^62 wraps to a negative count, 4 * 2^62 to exactly 0 (an "empty write").
  for (std::int64_t heads : {3, 4}) {
    for (const char* device : {"cpu", "meta"}) {
      ToyOp op(cls, {{"heads", Value(heads)}, {"n", Value(n)}, {"device", Value(device)}}, target);
      EXPECT_EQ(error_of<CheckError>([&] { op.call(Inputs{}); }),
                name + ": output y has shape [" + std::to_string(heads) +
                    ", 2147483648, 2147483648], whose element count overflows int64");
      EXPECT_EQ(op.serving_target(), std::nullopt);
      EXPECT_EQ(op.forward_calls(), 0);
      EXPECT_THROW(op.last_call(), RuntimeStateError);
    }
  }
  // 2^62 elements fit int64; their float32 bytes do not.
  ToyOp op(cls, {{"heads", Value(1)}, {"n", Value(n)}, {"device", Value("cpu")}}, target);
  EXPECT_EQ(error_of<CheckError>([&] { op.call(Inputs{}); }),
            name +
                ": output y of shape [1, 2147483648, 2147483648] and dtype float32 holds more "
                "bytes than int64 can count");
  EXPECT_EQ(wire->builds, 0);
  EXPECT_EQ(wire->runs, 0);
}

TEST(SizesThatOverflow, BroadcastOfTwoExpandedViewsReachesNoTarget) {
  const std::string name = unique_op("HugeBroadcast");
  const OpClass& cls = toy_class(name, kBroadcastEntry);
  auto wire = std::make_shared<Tripwire>();
  ToyOp op(cls, {}, tripwire_target(name, wire));
  const std::int64_t big = std::int64_t{1} << 32;
  const std::string refused =
      name + ": output y has shape [4294967296, 4294967296], whose element count overflows int64";
  EXPECT_EQ(error_of<CheckError>([&] {
              op.call(Inputs{expanded({big, 1}), expanded({1, big})});
            }),
            refused);
  EXPECT_EQ(error_of<CheckError>([&] {
              op.call(Inputs{meta({big, 1}), meta({1, big})});
            }),
            refused);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(wire->builds, 0);
  // The same op serves a broadcast that fits.
  EXPECT_EQ(op.call(Inputs{meta({big, 1}), meta({1, 2})}).at(0)->shape(), (Shape{big, 2}));
}

// See Note [Internal overlap]: PyTorch's rule and wording, after the op's and the tensor's names.
constexpr const char* kOverlapRule =
    ": unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location; pass a copy (Tensor::contiguous())";

TEST(InternalOverlap, WrittenInputThatOverlapsItselfReachesNoTarget) {
  const std::string name = unique_op("Overlap");
  const OpClass& cls = toy_class(name, kInplaceEntry);
  auto wire = std::make_shared<Tripwire>();
  ToyOp op(cls, {{"inplace", Value(true)}}, tripwire_target(name, wire));
  EXPECT_EQ(error_of<CheckError>([&] { op.call(Inputs{expanded({4})}); }),
            name + ": x" + kOverlapRule);
  EXPECT_EQ(op.serving_target(), std::nullopt);
  EXPECT_EQ(wire->builds, 0);
  // Only written tensors: the same view is fine where the op only reads it.
  ToyOp reads(cls, {{"inplace", Value(false)}});
  EXPECT_NO_THROW(reads.call(Inputs{expanded({4})}));
}

TEST(InternalOverlap, OutThatOverlapsItself) {
  ToyOp op(toy_class(unique_op("OverlapOut")));
  CallOptions options{expanded({4})};
  EXPECT_EQ(error_of<CheckError>([&] { op(cpu({4}), std::nullopt, options); }),
            op.name() + ": out" + kOverlapRule);
}

TEST(InternalOverlap, ExpandedResidualOfFusedAddRMSNorm) {
  FusedAddRMSNormFwdOp op;
  const Tensor x = cpu({4, 8}, DType::kFloat32);
  const Tensor weight = cpu({8}, DType::kFloat32);
  const Tensor row = cpu({1, 8}, DType::kFloat32);
  const Tensor residual = row.as_strided({4, 8}, {0, 1}, 0);  // one row, seen four times
  EXPECT_EQ(error_of<CheckError>([&] { op(x, residual, weight); }),
            std::string("FusedAddRMSNormFwdOp: residual") + kOverlapRule);
}

}  // namespace
}  // namespace tileops::optest
