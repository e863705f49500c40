// AlibiFwdOp on the GPU against the float64 reference: every out_dtype, head counts that are and
// are not powers of two, sequence lengths 0, 1, odd and vector multiples, outputs poisoned, a
// misaligned out, each implementation forced on the calls it claims and refusing one it does not,
// graph replay, and sizes past 32-bit indexing.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "attention.hpp"
#include "cuda_testing.hpp"
#include "tileops/ops/attention.hpp"

namespace tileops::test_cuda {
namespace {

// 1 and powers of two; 3, 12 and 112 (BLOOM-176B) are not.
const std::int64_t kHeadCounts[] = {1, 2, 3, 8, 12, 112};
// 1, odd lengths, a vector of every dtype (8), lengths off and on a block's columns.
const std::int64_t kSeqLens[] = {1, 7, 8, 33, 64, 257, 1030};

// The longest length per head count: the binary runs under compute-sanitizer too.
std::int64_t longest_for(std::int64_t heads) { return heads >= 100 ? 64 : heads > 3 ? 257 : 1030; }

TEST(CudaAlibi, EveryOutDtypeHeadCountAndLength) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (std::int64_t heads : kHeadCounts)
      for (std::int64_t s : kSeqLens) {
        if (s > longest_for(heads)) continue;
        SCOPED_TRACE(fmt::format("{} H={} S={}", dtype_name(dtype), heads, s));
        AlibiFwdOp op(heads, s, "cuda", dtype);
        run_and_check(op, {}, CallOptions{poisoned_gpu({heads, s, s}, dtype)});
        EXPECT_EQ(only_key(op, "alibi"), "alibi_vector_sm90");
        if (s > 64) continue;
        // The output the op allocates.
        AlibiFwdOp allocating(heads, s, "cuda", dtype);
        const CallResult result = run_and_check(allocating, {});
        EXPECT_EQ(result.at(0)->device(), gpu());
      }
}

TEST(CudaAlibi, DefaultOutDtypeIsFloat32) {
  TILEOPS_REQUIRE_CUDA();
  AlibiFwdOp op(32, 96, "cuda");
  const Tensor out = op();
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_EQ(out.device(), gpu());
  run_and_check(op, {});
}

TEST(CudaAlibi, EmptySequenceLaunchesNothing) {
  TILEOPS_REQUIRE_CUDA();
  AlibiFwdOp op(8, 0, "cuda", DType::kBFloat16);
  const Tensor out = op();
  EXPECT_EQ(out.shape(), (Shape{8, 0, 0}));
  EXPECT_EQ(out.device(), gpu());
  EXPECT_TRUE(op.built_entries("alibi").empty());
}

TEST(CudaAlibi, MisalignedOutTakesTheGeneralPath) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (std::int64_t s : {std::int64_t{7}, std::int64_t{64}}) {
      SCOPED_TRACE(fmt::format("{} S={}", dtype_name(dtype), s));
      const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
      Tensor poison = Tensor::empty({5, s, s}, dtype);
      std::memset(poison.data_ptr(), 0xFF, static_cast<std::size_t>(poison.nbytes()));
      AlibiFwdOp op(5, s, "cuda", dtype);
      run_and_check(op, {}, CallOptions{view_at_offset(poison, offset)});
      EXPECT_EQ(only_key(op, "alibi"), "alibi_general_sm90");
    }
}

// Each implementation forced on calls it claims, checked; the vector path refuses a misaligned
// out, naming why, and writes nothing.
TEST(CudaAlibi, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  for (const char* key : {"alibi_vector_sm90", "alibi_general_sm90"})
    for (DType dtype : kFloatDTypes)
      for (std::int64_t s : {std::int64_t{1}, std::int64_t{9}, std::int64_t{128}}) {
        SCOPED_TRACE(fmt::format("{} {} S={}", key, dtype_name(dtype), s));
        EnvGuard force("TILEOPS_FORCE", key);
        AlibiFwdOp op(6, s, "cuda", dtype);
        run_and_check(op, {}, CallOptions{poisoned_gpu({6, s, s}, dtype)});
        EXPECT_EQ(only_key(op, "alibi"), key);
      }
  EnvGuard force("TILEOPS_FORCE", "alibi_vector_sm90");
  AlibiFwdOp op(4, 16, "cuda", DType::kBFloat16);
  Tensor poison = Tensor::empty({4, 16, 16}, DType::kBFloat16);
  std::memset(poison.data_ptr(), 0xFF, static_cast<std::size_t>(poison.nbytes()));
  const Tensor out = view_at_offset(poison, 2);
  const std::string error = error_of<SelectionError>([&] { op(CallOptions{out}); });
  EXPECT_NE(error.find("TILEOPS_FORCE=alibi_vector_sm90 refuses this call"), std::string::npos)
      << error;
  EXPECT_NE(error.find("aligned to 2 bytes"), std::string::npos) << error;
  for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
}

TEST(CudaAlibi, ACapturedCallReplays) {
  TILEOPS_REQUIRE_CUDA();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    StreamGuard guard(Stream(gpu(), stream));
    AlibiFwdOp op(12, 100, "cuda", DType::kFloat16);
    Tensor out = poisoned_gpu({12, 100, 100}, DType::kFloat16);
    op(CallOptions{out});  // warm-up: the entry is built outside the capture
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    op(CallOptions{out});
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    out.copy_from(poisoned_gpu({12, 100, 100}, DType::kFloat16));
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    expect_matches_reference(op, {}, {}, {out});
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// 2 heads of 32769 positions: 2^31 + 2^17 + 2 elements of bfloat16. Rows at the start, the
// middle and the end are checked.
TEST(CudaAlibi, SizesPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t heads = 2, s = 32769;
  const DType dtype = DType::kBFloat16;
  AlibiFwdOp op(heads, s, "cuda", dtype);
  const Tensor out = op();
  EXPECT_EQ(only_key(op, "alibi"), "alibi_vector_sm90");
  const std::vector<double> slopes = references::alibi_slopes(heads);
  const references::Tolerance tol = references::tolerance(dtype);
  for (std::int64_t row : {std::int64_t{0}, s + 5, heads * s - 1}) {
    const std::int64_t h = row / s, i = row % s;
    const Tensor view =
        out.as_strided({s}, {1}, row * s * static_cast<std::int64_t>(dtype_size(dtype)));
    references::Expected e{"output", {}, {}};
    for (std::int64_t j = 0; j < s; ++j)
      e.values.push_back(slopes[static_cast<std::size_t>(h)] * static_cast<double>(j - i));
    const std::vector<double> got = host_values(view).values;
    const references::Comparison c = references::compare(got, e, tol);
    EXPECT_TRUE(c.ok()) << "row " << row << ": " << c.str(got, e.values, tol);
  }
}

}  // namespace
}  // namespace tileops::test_cuda
