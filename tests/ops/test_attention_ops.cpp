// AlibiFwdOp through the framework: the bias against a float64 oracle of the ALiBi slopes written
// here (docs/manifest.md §4.6), every out_dtype, out buffers, rooflines and the typed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops_testing.hpp"
#include "tileops/op/registry.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops::test_ops {
namespace {

// slope[h] = 2^(-8 (h + 1) / m) for h < m = 2^floor(log2 H); then 2^(-4 (2k + 1) / m).
std::vector<double> alibi_slopes(std::int64_t heads) {
  std::int64_t m = 1;
  while (m * 2 <= heads) m *= 2;
  std::vector<double> slopes;
  for (std::int64_t h = 0; h < m; ++h)
    slopes.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / m));
  for (std::int64_t k = 0; k < heads - m; ++k)
    slopes.push_back(std::exp2(-4.0 * static_cast<double>(2 * k + 1) / m));
  return slopes;
}

std::vector<double> alibi_oracle(std::int64_t heads, std::int64_t seq) {
  const std::vector<double> slopes = alibi_slopes(heads);
  std::vector<double> out;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < seq; ++i)
      for (std::int64_t j = 0; j < seq; ++j) out.push_back(slopes[h] * static_cast<double>(j - i));
  return out;
}

TEST(AlibiOps, SlopesOfTheOracle) {
  // Spot values of the reference code: 8 heads 1/2 .. 1/256; 12 heads = 8-head slopes followed
  // by the odd terms of the 16-head sequence, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
  const std::vector<double> s12 = alibi_slopes(12);
  ASSERT_EQ(s12.size(), 12u);
  EXPECT_EQ(s12[0], 0.5);
  EXPECT_EQ(s12[7], 1.0 / 256);
  EXPECT_DOUBLE_EQ(s12[8], std::exp2(-0.5));
  EXPECT_DOUBLE_EQ(s12[11], std::exp2(-3.5));
}

TEST(AlibiOps, EveryHeadCountAndOutDTypeMatchesOracle) {
  for (std::int64_t heads : {1, 8, 12}) {
    for (DType dtype : kFloatDTypes) {
      for (std::int64_t seq : {1, 17}) {
        SCOPED_TRACE(std::to_string(heads) + " heads, seq " + std::to_string(seq) + " " +
                     std::string(dtype_name(dtype)));
        AlibiFwdOp op(heads, seq, "cpu", dtype);
        const Tensor y = op();
        ASSERT_EQ(y.shape(), (Shape{heads, seq, seq}));
        ASSERT_EQ(y.dtype(), dtype);
        EXPECT_TRUE(y.device().is_cpu());
        EXPECT_TRUE(all_close(read(y), alibi_oracle(heads, seq), tolerance_for(dtype)));
        EXPECT_EQ(op.built_entries("alibi").size(), 1u);
      }
    }
  }
}

TEST(AlibiOps, MakeOpGenericCallOutAndRoofline) {
  std::shared_ptr<Op> op = make_op("AlibiFwdOp", ParamMap{{"num_heads", Value(12)},
                                                          {"seq_len", Value(9)},
                                                          {"out_dtype", Value(DType::kBFloat16)},
                                                          {"device", Value("cpu")}});
  Tensor out = poisoned_tensor({12, 9, 9}, DType::kBFloat16);
  CallResult r = op->call({}, CallOptions{out});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->storage(), out.storage());
  EXPECT_TRUE(all_close(read(out), alibi_oracle(12, 9), tolerance_for(DType::kBFloat16)));
  EXPECT_EQ(op->eval_roofline().flops, 2 * 12 * 81);
  EXPECT_EQ(op->eval_roofline().bytes, nbytes({12, 9, 9}, DType::kBFloat16));

  // out_dtype defaults to float32.
  std::shared_ptr<Op> plain =
      make_op("AlibiFwdOp",
              ParamMap{{"num_heads", Value(8)}, {"seq_len", Value(5)}, {"device", Value("cpu")}});
  EXPECT_EQ(plain->param("out_dtype").as_dtype(), DType::kFloat32);
  const Tensor y = *plain->call({}).at(0);
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(all_close(read(y), alibi_oracle(8, 5), tolerance_for(DType::kFloat32)));
}

TEST(AlibiOps, EmptyAndMeta) {
  AlibiFwdOp empty(4, 0, "cpu");
  EXPECT_EQ(empty().shape(), (Shape{4, 0, 0}));
  EXPECT_TRUE(empty.built_entries("alibi").empty());
  AlibiFwdOp meta(4, 6, "meta", DType::kFloat16);
  const Tensor m = meta();
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.shape(), (Shape{4, 6, 6}));
  EXPECT_EQ(m.dtype(), DType::kFloat16);
  EXPECT_TRUE(meta.built_entries("alibi").empty());
}

TEST(AlibiOps, Errors) {
  // No in-tree kernel runs on CUDA, and this machine's CUDA is not probed at construction.
  AlibiFwdOp cuda(8, 16, "cuda", DType::kBFloat16);
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] { cuda(); }, "AlibiFwdOp's in-tree kernels do not run on cuda:0"));
  EXPECT_TRUE(cuda.built_entries("alibi").empty());
  EXPECT_TRUE(throws_containing<OpNotAvailableError>(
      [&] { cuda(); }, "AlibiFwdOp's in-tree kernels do not run on cuda:0"));

  AlibiFwdOp op(8, 4, "cpu");
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(CallOptions{Tensor::empty({8, 4, 5}, DType::kFloat32)});
      },
      "AlibiFwdOp: out does not have the shape of output: got [8, 4, 5], expected [8, 4, 4]"));
  EXPECT_TRUE(throws_with<CheckError>(
      [&] {
        op(CallOptions{Tensor::empty({8, 4, 4}, DType::kFloat16)});
      },
      "AlibiFwdOp: out dtype is not the dtype of output: got float16, expected float32"));
  EXPECT_TRUE(throws_containing<CheckError>(
      [&] {
        op(CallOptions{Tensor::meta({8, 4, 4}, DType::kFloat32)});
      },
      "AlibiFwdOp: "));
  EXPECT_TRUE(all_close(read(op()), alibi_oracle(8, 4), tolerance_for(DType::kFloat32)));

  EXPECT_TRUE(throws_containing<CheckError>([] { AlibiFwdOp(0, 4, "cpu")(); }, "AlibiFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([] { AlibiFwdOp(2, -1, "cpu")(); }, "AlibiFwdOp: "));
  EXPECT_TRUE(throws_containing<CheckError>([] { AlibiFwdOp(2, 4, "cpu", DType::kInt32); },
                                            "AlibiFwdOp: "));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("AlibiFwdOp", ParamMap{{"num_heads", Value(8)}, {"seq_len", Value(4)}});
      },
      "AlibiFwdOp: param 'device' is required"));
  EXPECT_TRUE(throws_with<CheckError>(
      [] {
        make_op("AlibiFwdOp", ParamMap{{"num_heads", Value(8)},
                                       {"seq_len", Value(4)},
                                       {"device", Value("cpu")},
                                       {"heads", Value(8)}});
      },
      "AlibiFwdOp: unknown param 'heads'"));
}

}  // namespace
}  // namespace tileops::test_ops
