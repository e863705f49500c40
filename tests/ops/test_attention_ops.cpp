// What is specific to AlibiFwdOp through the framework: the ALiBi slopes for power-of-two and
// other head counts (docs/manifest.md §4.6), the out_dtype default, the roofline and the rules on
// num_heads and seq_len. Dtypes, out=, empty and meta calls, the CUDA device and the bad arguments
// every signature implies are the generic suite's (tests/ops/generic/). Oracle:
// references/attention.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attention.hpp"
#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops::test_ops {
namespace {

TEST(AlibiOps, ReferenceSlopes) {
  // Spot values of the paper's reference code: 8 heads 1/2 .. 1/256; 12 heads = 8-head slopes
  // followed by the odd terms of the 16-head sequence, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
  const std::vector<double> s12 = references::alibi_slopes(12);
  ASSERT_EQ(s12.size(), 12u);
  EXPECT_EQ(s12[0], 0.5);
  EXPECT_EQ(s12[7], 1.0 / 256);
  EXPECT_DOUBLE_EQ(s12[8], std::exp2(-0.5));
  EXPECT_DOUBLE_EQ(s12[11], std::exp2(-3.5));
}

TEST(AlibiOps, EveryHeadCountMatchesTheReference) {
  for (std::int64_t heads : {1, 8, 12}) {
    for (std::int64_t seq : {1, 17}) {
      SCOPED_TRACE(std::to_string(heads) + " heads, seq " + std::to_string(seq));
      AlibiFwdOp op(heads, seq, "cpu");
      const Tensor y = op();
      ASSERT_EQ(y.shape(), (Shape{heads, seq, seq}));
      EXPECT_TRUE(
          all_close(read(y), references::alibi(heads, seq), tolerance_for(DType::kFloat32)));
      EXPECT_EQ(op.built_entries("alibi").size(), 1u);
    }
  }
}

TEST(AlibiOps, DefaultOutDTypeAndRoofline) {
  std::shared_ptr<Op> plain =
      make_op("AlibiFwdOp",
              ParamMap{{"num_heads", Value(8)}, {"seq_len", Value(5)}, {"device", Value("cpu")}});
  EXPECT_EQ(plain->param("out_dtype").as_dtype(), DType::kFloat32);
  EXPECT_EQ(plain->call({}).at(0)->dtype(), DType::kFloat32);

  AlibiFwdOp op(12, 9, "cpu", DType::kBFloat16);
  op();
  EXPECT_EQ(op.eval_roofline().flops, 2 * 12 * 81);
  EXPECT_EQ(op.eval_roofline().bytes, nbytes({12, 9, 9}, DType::kBFloat16));
}

// Op::check_call states a call on meta tensors, so its device is meta: an out= buffer's stand-in is
// checked for its geometry, not refused for being off the `device` param's device, as it was
// before fuzz_op_call found it. The real call still wants the buffer on its device.
TEST(AlibiOps, CheckCallTakesAnOutBuffersGeometry) {
  AlibiFwdOp op(4, 6, "cpu", DType::kBFloat16);
  const Tensor out = Tensor::empty({4, 6, 6}, DType::kBFloat16);
  const manifest::SignatureCall call = op.check_call({}, &out);
  EXPECT_EQ(call.output(0).shape, (Shape{4, 6, 6}));
  EXPECT_EQ(call.device(), Device::meta());
  const Tensor wrong = Tensor::empty({4, 6, 5}, DType::kBFloat16);
  EXPECT_TRUE(throws_containing<CheckError>([&] { op.check_call({}, &wrong); },
                                            "AlibiFwdOp: out does not have the shape of output"));
  CallOptions meta_out;
  meta_out.out = Tensor::meta({4, 6, 6}, DType::kBFloat16);
  EXPECT_TRUE(throws_with<CheckError>([&] { op.call({}, meta_out); },
                                      "AlibiFwdOp: out is not on the call device cpu: got meta"));
  CallOptions cpu_out;
  cpu_out.out = out;
  EXPECT_EQ(op.call({}, cpu_out).at(0)->data_ptr(), out.data_ptr());
}

TEST(AlibiOps, Rules) {
  EXPECT_TRUE(throws_with<CheckError>([] { AlibiFwdOp(0, 4, "cpu")(); },
                                      "AlibiFwdOp: shape_rules[0]: num_heads > 0"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] { AlibiFwdOp(2, -1, "cpu")(); },
      "AlibiFwdOp: param 'seq_len' = -1 is an axis length of output and may not be negative"));
}

}  // namespace
}  // namespace tileops::test_ops
