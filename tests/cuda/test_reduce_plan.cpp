// The reduction plans' choices for few outputs (Note [Column splits], Note [Held chunks] in
// kernels/reduction/cuda/reduce_axes.cuh): host code, so these run without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/reduction/cuda/reduce_launch.hpp"

namespace tileops::test_cuda {
namespace {

using kernels::cuda::plan_reduce;
using kernels::cuda::plan_reduce_rows;
using kernels::cuda::ReduceKernel;
using kernels::cuda::ReduceLaunch;

constexpr int kH200Sms = 132;
constexpr std::int64_t kColumnBlocksPerSm = 2;  // the column kernel's launch bounds

std::vector<bool> every_axis(std::size_t rank) { return std::vector<bool>(rank, true); }

// A split column plan fills the device once: splits x blocks within two blocks an SM, and one
// split more would pass them unless each split is already down to 64 steps (a load a thread).
void expect_one_wave(const ReduceLaunch& l, int sms) {
  ASSERT_EQ(l.kernel, ReduceKernel::kColumns);
  ASSERT_GT(l.chunks, 1);
  EXPECT_LE(l.blocks * l.chunks, kColumnBlocksPerSm * sms);
  if (l.chunks < (l.count + 63) / 64) {
    EXPECT_GT(l.blocks * (l.chunks + 1), kColumnBlocksPerSm * sms);
  }
  // Every reduced step belongs to exactly one split.
  EXPECT_GE(l.chunk_len * l.chunks, l.count);
  EXPECT_LT(l.chunk_len * (l.chunks - 1), l.count);
  EXPECT_EQ(l.scratch_bytes, l.outputs * l.chunks * 8);
}

TEST(ReducePlan, ColumnSplitsFillTheDeviceOnce) {
  // hidden-state-dim0: 16 tiles of 256 bfloat16 columns, 16 splits of 128 rows on the H200.
  const ReduceLaunch dim0 =
      plan_reduce(DType::kBFloat16, Shape{2048, 4096}, {true, false}, true, kH200Sms);
  expect_one_wave(dim0, kH200Sms);
  EXPECT_EQ(dim0.blocks, 16);
  EXPECT_EQ(dim0.chunks, 16);
  EXPECT_EQ(dim0.chunk_len, 128);
  for (int sms : {1, 7, 78, 114, 132, 144})
    for (const Shape& shape :
         {Shape{2048, 4096}, Shape{3000, 24}, Shape{2048, 520}, Shape{64, 4, 32, 256}}) {
      SCOPED_TRACE(testing::Message() << shape.str() << " on " << sms << " SMs");
      std::vector<bool> reduced(shape.size(), false);
      reduced[0] = true;
      if (shape.size() == 4) reduced[2] = true;
      const ReduceLaunch l = plan_reduce(DType::kFloat32, shape, reduced, true, sms);
      if (l.chunks == 1) {
        // Not split: the tiles alone fill half the device, or too few steps to share.
        EXPECT_TRUE(2 * l.blocks > kColumnBlocksPerSm * sms || l.count < 128);
        continue;
      }
      expect_one_wave(l, sms);
    }
}

TEST(ReducePlan, EveryElementOfAnAlignedRunIsCutIntoHeldChunks) {
  // hidden-state-full: 2^21 float32 vectors in 512 chunks of 1024 threads x 4 vectors.
  const ReduceLaunch full =
      plan_reduce(DType::kFloat32, Shape{2048, 4096}, every_axis(2), true, kH200Sms);
  EXPECT_EQ(full.kernel, ReduceKernel::kHeld);
  EXPECT_EQ(full.threads, 1024);
  EXPECT_EQ(full.chunk_len, 1024 * 4 * 4);
  EXPECT_EQ(full.chunks, 512);
  EXPECT_EQ(full.blocks, 512);
  EXPECT_EQ(full.finish_lanes, 0);  // a block adds the 512 partials
  EXPECT_EQ(full.scratch_bytes, 512 * 8);

  // A last chunk shorter than the others, and a run too short for 1024 threads.
  const ReduceLaunch odd =
      plan_reduce(DType::kBFloat16, Shape{3, 70000}, every_axis(2), true, kH200Sms);
  EXPECT_EQ(odd.kernel, ReduceKernel::kHeld);
  EXPECT_EQ(odd.chunks, 7);  // 26250 vectors of 8 in chunks of 4096
  EXPECT_LT(odd.chunk_len * (odd.chunks - 1), odd.run);
  // 2500 vectors: 640 threads (whole warps of 4 vectors a thread), one held row of 2500.
  const ReduceLaunch short_run =
      plan_reduce(DType::kBFloat16, Shape{20000}, every_axis(1), true, kH200Sms);
  EXPECT_EQ(short_run.kernel, ReduceKernel::kHeld);
  EXPECT_EQ(short_run.threads, 640);
  EXPECT_EQ(short_run.chunks, 1);
  EXPECT_EQ(short_run.chunk_len, 20000);
  EXPECT_EQ(short_run.scratch_bytes, 0);

  // The rows paths' plan takes them for one long row too.
  const ReduceLaunch row =
      plan_reduce_rows(DType::kBFloat16, Shape{1, 262144}, {false, true}, kH200Sms);
  EXPECT_EQ(row.kernel, ReduceKernel::kHeld);
  EXPECT_EQ(row.chunks, 8);
}

TEST(ReducePlan, UnalignedOrSegmentedRunsKeepTheRowsKernel) {
  // Not 16-byte aligned: element accesses, the rows kernel's chunks and a finishing kernel.
  const ReduceLaunch unaligned =
      plan_reduce(DType::kFloat32, Shape{2048, 4096}, every_axis(2), false, kH200Sms);
  EXPECT_EQ(unaligned.kernel, ReduceKernel::kRows);
  EXPECT_GT(unaligned.chunks, 1);
  // Whole vectors are required of the held chunks: 70001 elements are not.
  const ReduceLaunch odd = plan_reduce(DType::kBFloat16, Shape{70001}, every_axis(1), true, 132);
  EXPECT_EQ(odd.kernel, ReduceKernel::kRows);
  // Two outputs of long rows: the rows kernel's chunks, a warp finishing each output.
  const ReduceLaunch two =
      plan_reduce(DType::kBFloat16, Shape{2, 70000}, {false, true}, true, kH200Sms);
  EXPECT_EQ(two.kernel, ReduceKernel::kRows);
  EXPECT_GT(two.chunks, 1);
  EXPECT_EQ(two.finish_lanes, 32);
  // More chunks than a grid holds (2^48 float32 vectors): the rows kernel, whose grid loops.
  const ReduceLaunch huge =
      plan_reduce(DType::kFloat32, Shape{std::int64_t{1} << 50}, every_axis(1), true, kH200Sms);
  EXPECT_EQ(huge.kernel, ReduceKernel::kRows);
  EXPECT_LE(huge.blocks, 0x7fffffff);
}

}  // namespace
}  // namespace tileops::test_cuda
