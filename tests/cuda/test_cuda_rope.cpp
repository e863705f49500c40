// RopeFwdOp on the GPU against the float64 reference: every dtype and positions dtype, both
// pairings, full and partial rotary widths, one token, empty calls, odd head counts, strided and
// misaligned views, each implementation forced on the shapes it claims and refusing one it does
// not, positions outside the cache (skipped without the checking mode, CheckError with it), graph
// replay, and sizes past 32-bit indexing.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "cuda/kernel_checks.hpp"
#include "cuda_testing.hpp"
#include "rope.hpp"
#include "test_stream.hpp"
#include "tileops/ops/rope.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 7000;
  return seed++;
}

const DType kIndexDTypes[] = {DType::kInt32, DType::kInt64};

// positions [values.size()] of `dtype` on the device.
Tensor positions_gpu(const std::vector<std::int64_t>& values, DType dtype) {
  Tensor host = Tensor::empty({static_cast<std::int64_t>(values.size())}, dtype);
  for (std::size_t n = 0; n < values.size(); ++n) {
    if (dtype == DType::kInt32)
      host.data<std::int32_t>()[n] = static_cast<std::int32_t>(values[n]);
    else
      host.data<std::int64_t>()[n] = values[n];
  }
  return host.to(gpu(), dtype);
}

std::vector<std::int64_t> random_positions(std::int64_t tokens, std::int64_t rows,
                                           std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> row(0, rows - 1);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(tokens));
  for (auto& p : positions) p = row(rng);
  return positions;
}

// One call's geometry.
struct Geometry {
  std::int64_t tokens = 37, q_heads = 5, k_heads = 3, head_size = 128, rotary_dim = 128,
               cache_rows = 64;
};

// Runs `op` on fresh inputs of `g` and checks query and key against the reference; returns the
// key of the entry the call built.
std::string check_rope(RopeFwdOp& op, const Geometry& g, DType dtype, DType index_dtype) {
  const Tensor positions =
      positions_gpu(random_positions(g.tokens, g.cache_rows, next_seed()), index_dtype);
  const Tensor query = random_gpu({g.tokens, g.q_heads, g.head_size}, dtype, next_seed());
  const Tensor key = random_gpu({g.tokens, g.k_heads, g.head_size}, dtype, next_seed());
  const Tensor cache = random_gpu({g.cache_rows, g.rotary_dim}, dtype, next_seed());
  run_and_check(op, {positions, query, key, cache});
  return only_key(op, "rope");
}

TEST(CudaRope, EveryDtypePositionsDtypeAndPairing) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (DType index_dtype : kIndexDTypes)
      for (bool is_neox : {true, false}) {
        SCOPED_TRACE(
            fmt::format("{} {} neox={}", dtype_name(dtype), dtype_name(index_dtype), is_neox));
        RopeFwdOp op(is_neox);
        EXPECT_EQ(check_rope(op, Geometry{}, dtype, index_dtype),
                  is_neox ? "rope_neox_vector_sm90" : "rope_interleaved_vector_sm90");
      }
}

TEST(CudaRope, PartialRotaryLeavesTheOtherColumnsBitForBit) {
  TILEOPS_REQUIRE_CUDA();
  // GPT-J: 64 of 256 columns; a narrow rotary width of one vector pair; D = 80 (not a power of 2).
  const Geometry shapes[] = {{9, 4, 4, 256, 64, 32}, {9, 3, 1, 128, 32, 16}, {9, 3, 2, 80, 48, 16}};
  for (DType dtype : kFloatDTypes)
    for (bool is_neox : {true, false})
      for (const Geometry& g : shapes) {
        SCOPED_TRACE(fmt::format("{} neox={} D={} R={}", dtype_name(dtype), is_neox, g.head_size,
                                 g.rotary_dim));
        RopeFwdOp op(is_neox);
        const Tensor positions =
            positions_gpu(random_positions(g.tokens, g.cache_rows, next_seed()), DType::kInt64);
        const Tensor query = random_gpu({g.tokens, g.q_heads, g.head_size}, dtype, next_seed());
        const Tensor key = random_gpu({g.tokens, g.k_heads, g.head_size}, dtype, next_seed());
        const Tensor cache = random_gpu({g.cache_rows, g.rotary_dim}, dtype, next_seed());
        const std::vector<double> q0 = host_values(query).values;
        run_and_check(op, {positions, query, key, cache});
        const std::vector<double> q1 = host_values(query).values;
        for (std::size_t k = 0; k < q0.size(); ++k)
          if (static_cast<std::int64_t>(k) % g.head_size >= g.rotary_dim) {
            ASSERT_EQ(std::memcmp(&q0[k], &q1[k], sizeof(double)), 0) << "column beyond R at " << k;
          }
      }
}

TEST(CudaRope, OneTokenOddHeadCountsAndOneSidedCalls) {
  TILEOPS_REQUIRE_CUDA();
  const Geometry shapes[] = {
      {1, 32, 8, 128, 128, 4096},  // decode, one token
      {3, 7, 1, 128, 128, 8},      // odd head counts
      {5, 0, 3, 64, 64, 8},        // no query heads
      {5, 3, 0, 64, 64, 8},        // no key heads
      {2, 71, 13, 128, 128, 8},    // heads past a block of threads within one token
  };
  for (DType dtype : kFloatDTypes)
    for (bool is_neox : {true, false})
      for (const Geometry& g : shapes) {
        SCOPED_TRACE(fmt::format("{} neox={} N={} Hq={} Hk={}", dtype_name(dtype), is_neox,
                                 g.tokens, g.q_heads, g.k_heads));
        RopeFwdOp op(is_neox);
        check_rope(op, g, dtype, DType::kInt64);
      }
}

TEST(CudaRope, EmptyCallsLaunchNothing) {
  TILEOPS_REQUIRE_CUDA();
  RopeFwdOp op;
  op(positions_gpu({}, DType::kInt64), Tensor::empty({0, 4, 64}, DType::kBFloat16, gpu()),
     Tensor::empty({0, 2, 64}, DType::kBFloat16, gpu()),
     random_gpu({8, 64}, DType::kBFloat16, next_seed()));
  EXPECT_TRUE(op.built_entries("rope").empty());
  // R = 0 rotates nothing: the heads keep every bit.
  const Tensor query = random_gpu({3, 2, 16}, DType::kFloat32, next_seed());
  const std::vector<double> before = host_values(query).values;
  op(positions_gpu({0, 1, 2}, DType::kInt32), query,
     random_gpu({3, 1, 16}, DType::kFloat32, next_seed()),
     Tensor::empty({4, 0}, DType::kFloat32, gpu()));
  EXPECT_EQ(host_values(query).values, before);
}

TEST(CudaRope, RotaryWidthsOffTheVectorsTakeTheGeneralPath) {
  TILEOPS_REQUIRE_CUDA();
  struct Case {
    DType dtype;
    bool is_neox;
    std::int64_t d, r;
    const char* key;
  };
  for (const Case& c : {
           Case{DType::kBFloat16, true, 128, 120, "rope_general_sm90"},  // R/2 = 60
           Case{DType::kBFloat16, true, 64, 16, "rope_neox_vector_sm90"},
           Case{DType::kBFloat16, false, 64, 24, "rope_interleaved_vector_sm90"},
           Case{DType::kBFloat16, false, 64, 6, "rope_general_sm90"},
           Case{DType::kFloat32, true, 64, 8, "rope_neox_vector_sm90"},
           Case{DType::kFloat32, true, 64, 12, "rope_general_sm90"},  // R/2 = 6
           Case{DType::kFloat32, false, 64, 4, "rope_interleaved_vector_sm90"},
           Case{DType::kFloat16, true, 36, 32, "rope_general_sm90"},  // heads of 72 bytes
           Case{DType::kFloat16, false, 7, 2, "rope_general_sm90"},
       }) {
    SCOPED_TRACE(fmt::format("{} neox={} D={} R={}", dtype_name(c.dtype), c.is_neox, c.d, c.r));
    RopeFwdOp op(c.is_neox);
    EXPECT_EQ(check_rope(op, {11, 3, 2, c.d, c.r, 16}, c.dtype, DType::kInt32), c.key);
  }
}

TEST(CudaRope, StridedAndMisalignedViews) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (bool is_neox : {true, false}) {
      SCOPED_TRACE(fmt::format("{} neox={}", dtype_name(dtype), is_neox));
      const Geometry g{13, 4, 2, 128, 64, 32};
      const Tensor positions =
          positions_gpu(random_positions(g.tokens, g.cache_rows, next_seed()), DType::kInt64);
      const Tensor cache = random_gpu({g.cache_rows, g.rotary_dim}, dtype, next_seed());
      // query: every other head of a [N, 2 Hq, D] tensor; rotated through a copy.
      const Tensor q_base = random_gpu({g.tokens, 2 * g.q_heads, g.head_size}, dtype, next_seed());
      const Tensor query = q_base.as_strided({g.tokens, g.q_heads, g.head_size},
                                             {2 * g.q_heads * g.head_size, 2 * g.head_size, 1}, 0);
      ASSERT_FALSE(query.is_contiguous());
      const Tensor others = q_base.as_strided(
          {g.tokens, g.q_heads, g.head_size}, {2 * g.q_heads * g.head_size, 2 * g.head_size, 1},
          g.head_size * static_cast<std::int64_t>(dtype_size(dtype)));
      const std::vector<double> others_before = host_values(others).values;
      RopeFwdOp strided(is_neox);
      run_and_check(strided,
                    {positions, query,
                     random_gpu({g.tokens, g.k_heads, g.head_size}, dtype, next_seed()), cache});
      EXPECT_EQ(host_values(others).values, others_before) << "heads between the view's changed";
      // One element past a 16-byte boundary: key, then the cache.
      const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
      RopeFwdOp misaligned_key(is_neox);
      run_and_check(
          misaligned_key,
          {positions, random_gpu({g.tokens, g.q_heads, g.head_size}, dtype, next_seed()),
           view_at_offset(random_host({g.tokens, g.k_heads, g.head_size}, dtype, next_seed()),
                          offset),
           cache});
      EXPECT_EQ(only_key(misaligned_key, "rope"), "rope_general_sm90");
      RopeFwdOp misaligned_cache(is_neox);
      run_and_check(
          misaligned_cache,
          {positions, random_gpu({g.tokens, g.q_heads, g.head_size}, dtype, next_seed()),
           random_gpu({g.tokens, g.k_heads, g.head_size}, dtype, next_seed()),
           view_at_offset(random_host({g.cache_rows, g.rotary_dim}, dtype, next_seed()), offset)});
      EXPECT_EQ(only_key(misaligned_cache, "rope"), "rope_general_sm90");
    }
}

// query and key as the head ranges of one fused [N, Hq + 2 Hk, D] qkv tensor, as a fused
// projection leaves them (Note [Disjoint bands] in src/core/tensor.cpp): rotated through copies as
// any strided view, and the value heads between and after them keep their bytes.
TEST(CudaRope, FusedQkvHeadRanges) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (bool is_neox : {true, false}) {
      SCOPED_TRACE(fmt::format("{} neox={}", dtype_name(dtype), is_neox));
      const Geometry g{13, 4, 2, 128, 64, 32};
      const std::int64_t row = (g.q_heads + 2 * g.k_heads) * g.head_size;
      const auto item = static_cast<std::int64_t>(dtype_size(dtype));
      const Tensor qkv =
          random_gpu({g.tokens, g.q_heads + 2 * g.k_heads, g.head_size}, dtype, next_seed());
      const auto heads = [&](std::int64_t first, std::int64_t count) {
        return qkv.as_strided({g.tokens, count, g.head_size}, {row, g.head_size, 1},
                              first * g.head_size * item);
      };
      const Tensor value = heads(g.q_heads + g.k_heads, g.k_heads);
      const std::vector<double> value_before = host_values(value).values;
      RopeFwdOp op(is_neox);
      run_and_check(
          op, {positions_gpu(random_positions(g.tokens, g.cache_rows, next_seed()), DType::kInt64),
               heads(0, g.q_heads), heads(g.q_heads, g.k_heads),
               random_gpu({g.cache_rows, g.rotary_dim}, dtype, next_seed())});
      EXPECT_EQ(host_values(value).values, value_before) << "the value heads changed";
    }
}

// Each implementation forced on shapes it claims, checked; calls it does not claim fail with its
// refusal and leave query and key as they were.
TEST(CudaRope, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  struct Forced {
    const char* key;
    bool is_neox;
  };
  for (const Forced& f :
       {Forced{"rope_neox_vector_sm90", true}, Forced{"rope_interleaved_vector_sm90", false},
        Forced{"rope_general_sm90", true}, Forced{"rope_general_sm90", false}})
    for (DType dtype : kFloatDTypes)
      for (DType index_dtype : kIndexDTypes) {
        SCOPED_TRACE(fmt::format("{} neox={} {} {}", f.key, f.is_neox, dtype_name(dtype),
                                 dtype_name(index_dtype)));
        EnvGuard force("TILEOPS_FORCE", f.key);
        RopeFwdOp op(f.is_neox);
        EXPECT_EQ(check_rope(op, {21, 6, 2, 128, 128, 32}, dtype, index_dtype), f.key);
        RopeFwdOp partial(f.is_neox);
        EXPECT_EQ(check_rope(partial, {21, 3, 3, 96, 32, 32}, dtype, index_dtype), f.key);
      }

  struct Refused {
    const char* key;
    bool is_neox;
    std::int64_t offset, d, r;
    const char* reason;
  };
  for (const Refused& r : {
           Refused{"rope_neox_vector_sm90", true, 2, 64, 64, "aligned to 2 bytes"},
           Refused{"rope_neox_vector_sm90", false, 0, 64, 64, "pairs are interleaved"},
           Refused{"rope_neox_vector_sm90", true, 0, 64, 24, "R/2 = 12 is not a multiple of 8"},
           Refused{"rope_interleaved_vector_sm90", false, 2, 64, 64, "aligned to 2 bytes"},
           Refused{"rope_interleaved_vector_sm90", true, 0, 64, 64, "pairs are rotate-half"},
           Refused{"rope_interleaved_vector_sm90", false, 0, 64, 12,
                   "R = 12 is not a multiple of 8"},
           Refused{"rope_interleaved_vector_sm90", false, 0, 36, 8, "rows of 72 bytes"},
       }) {
    SCOPED_TRACE(fmt::format("{} {}", r.key, r.reason));
    EnvGuard force("TILEOPS_FORCE", r.key);
    RopeFwdOp op(r.is_neox);
    const DType bf16 = DType::kBFloat16;
    const Tensor query = view_at_offset(random_host({3, 2, r.d}, bf16, next_seed()), r.offset);
    const Tensor key = random_gpu({3, 1, r.d}, bf16, next_seed());
    const std::vector<double> q0 = host_values(query).values, k0 = host_values(key).values;
    const std::string error = error_of<SelectionError>([&] {
      op(positions_gpu({0, 1, 2}, DType::kInt64), query, key,
         random_gpu({4, r.r}, bf16, next_seed()));
    });
    EXPECT_NE(error.find(std::string("TILEOPS_FORCE=") + r.key + " refuses this call"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(r.reason), std::string::npos) << error;
    EXPECT_EQ(host_values(query).values, q0);
    EXPECT_EQ(host_values(key).values, k0);
  }
}

// ---- Positions outside the cache ---------------------------------------------------------------

// The reference for calls with bad positions: good tokens rotated, bad ones as they were.
references::Expected expected_skipping_bad(const references::HostTensor& x,
                                           const std::vector<std::int64_t>& positions,
                                           const references::HostTensor& cache, bool is_neox,
                                           const char* name) {
  const std::int64_t heads = x.shape[1], d = x.shape[2], rows = cache.shape[0];
  const auto row_size = static_cast<std::size_t>(heads * d);
  references::Expected e{name, x.values, {}};
  e.scale.resize(x.values.size());
  for (std::size_t k = 0; k < x.values.size(); ++k) e.scale[k] = std::abs(x.values[k]);
  for (std::size_t n = 0; n < positions.size(); ++n) {
    if (positions[n] < 0 || positions[n] >= rows) continue;
    const std::vector<double> token(
        x.values.begin() + static_cast<std::ptrdiff_t>(n * row_size),
        x.values.begin() + static_cast<std::ptrdiff_t>((n + 1) * row_size));
    std::vector<double> scale;
    const std::vector<double> rotated =
        references::rope(token, heads, d, {static_cast<double>(positions[n])}, cache.values,
                         cache.shape[1], is_neox, &scale);
    std::copy(rotated.begin(), rotated.end(), e.values.begin() + n * row_size);
    std::copy(scale.begin(), scale.end(), e.scale.begin() + n * row_size);
  }
  return e;
}

void expect_skipped(RopeFwdOp& op, bool is_neox, DType dtype, DType index_dtype,
                    const std::vector<std::int64_t>& positions, std::int64_t d, std::int64_t r,
                    std::int64_t rows) {
  const auto n = static_cast<std::int64_t>(positions.size());
  const Tensor query = random_gpu({n, 3, d}, dtype, next_seed());
  const Tensor key = random_gpu({n, 2, d}, dtype, next_seed());
  const Tensor cache = random_gpu({rows, r}, dtype, next_seed());
  const references::HostTensor q0 = host_values(query), k0 = host_values(key);
  const references::HostTensor c = host_values(cache);
  op(positions_gpu(positions, index_dtype), query, key, cache);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const references::Tolerance tol = references::tolerance(dtype);
  for (const auto& [tensor, before, name] :
       {std::tuple{&query, &q0, "query"}, std::tuple{&key, &k0, "key"}}) {
    const references::Expected e = expected_skipping_bad(*before, positions, c, is_neox, name);
    const std::vector<double> got = host_values(*tensor).values;
    const references::Comparison cmp = references::compare(got, e, tol);
    EXPECT_TRUE(cmp.ok()) << name << ": " << cmp.str(got, e.values, tol);
    // The skipped tokens keep every bit.
    const auto row_size = static_cast<std::size_t>(before->shape[1] * d);
    for (std::size_t t = 0; t < positions.size(); ++t)
      if (positions[t] < 0 || positions[t] >= rows) {
        for (std::size_t k = t * row_size; k < (t + 1) * row_size; ++k)
          ASSERT_EQ(std::memcmp(&got[k], &before->values[k], sizeof(double)), 0)
              << name << " token " << t;
      }
  }
}

TEST(CudaRope, PositionsOutsideTheCacheAreSkippedWithoutTheCheckingMode) {
  TILEOPS_REQUIRE_CUDA();
  // Below 0, at P, far past P (a wild int64 or int32), between good ones.
  const std::vector<std::int64_t> positions64 = {0, -1, 7, 8, 3, std::int64_t{1} << 40, 5, -9};
  const std::vector<std::int64_t> positions32 = {0, -1, 7, 8, 3, 2147483647, 5, -2147483647 - 1};
  for (DType dtype : kFloatDTypes)
    for (DType index_dtype : kIndexDTypes)
      for (bool is_neox : {true, false})
        for (bool vector : {true, false}) {
          SCOPED_TRACE(fmt::format("{} {} neox={} vector={}", dtype_name(dtype),
                                   dtype_name(index_dtype), is_neox, vector));
          RopeFwdOp op(is_neox);
          // R = 6 takes the general path.
          expect_skipped(op, is_neox, dtype, index_dtype,
                         index_dtype == DType::kInt64 ? positions64 : positions32, 64,
                         vector ? 64 : 6, 8);
        }
}

TEST(CudaRope, TheCheckingModeRaisesTheCpuKernelsErrorForTheFirstBadPosition) {
  TILEOPS_REQUIRE_CUDA();
  CheckingMode checking;
  for (DType index_dtype : kIndexDTypes)
    for (bool is_neox : {true, false}) {
      SCOPED_TRACE(fmt::format("{} neox={}", dtype_name(index_dtype), is_neox));
      RopeFwdOp op(is_neox);
      const DType bf16 = DType::kBFloat16;
      // 300 tokens over many blocks; bad ones at 250 and 77 (reported: the lower) and 299.
      std::vector<std::int64_t> positions = random_positions(300, 16, next_seed());
      positions[250] = -4;
      positions[77] = 16;
      positions[299] = 1000;
      const Tensor query = random_gpu({300, 3, 64}, bf16, next_seed());
      const Tensor key = random_gpu({300, 1, 64}, bf16, next_seed());
      const Tensor cache = random_gpu({16, 64}, bf16, next_seed());
      const std::string error = error_of<CheckError>(
          [&] { op(positions_gpu(positions, index_dtype), query, key, cache); });
      EXPECT_EQ(error,
                "RopeFwdOp: positions[77] = 16 is outside the rows of cos_sin_cache, [0, 16)");
      // The record was reset: a good call passes, and the next bad one names its own position.
      check_rope(op, {300, 3, 1, 64, 64, 16}, bf16, index_dtype);
      EXPECT_EQ(error_of<CheckError>([&] {
                  op(positions_gpu({1, 2, -1}, index_dtype),
                     random_gpu({3, 3, 64}, bf16, next_seed()),
                     random_gpu({3, 1, 64}, bf16, next_seed()), cache);
                }),
                "RopeFwdOp: positions[2] = -1 is outside the rows of cos_sin_cache, [0, 16)");
    }
  // The general path reports too.
  RopeFwdOp general;
  EXPECT_EQ(error_of<CheckError>([&] {
              general(positions_gpu({3, 9}, DType::kInt32),
                      random_gpu({2, 1, 7}, DType::kFloat32, next_seed()),
                      random_gpu({2, 1, 7}, DType::kFloat32, next_seed()),
                      random_gpu({4, 6}, DType::kFloat32, next_seed()));
            }),
            "RopeFwdOp: positions[1] = 9 is outside the rows of cos_sin_cache, [0, 4)");
  // A failed call keeps no record: a good call of the same geometry names the path that served.
  general(positions_gpu({3, 1}, DType::kInt32), random_gpu({2, 1, 7}, DType::kFloat32, next_seed()),
          random_gpu({2, 1, 7}, DType::kFloat32, next_seed()),
          random_gpu({4, 6}, DType::kFloat32, next_seed()));
  EXPECT_EQ(only_key(general, "rope"), "rope_general_sm90");
}

// ---- CUDA graphs
// ---------------------------------------------------------------------------------

// Captures one call on fresh inputs, replays it on new values and checks the result. The checking
// mode does not apply to a captured call (it cannot synchronise), so capture works under it too.
void capture_and_replay(bool checking) {
  std::optional<CheckingMode> mode;
  if (checking) mode.emplace();
  TestStream s;
  RopeFwdOp op;
  const DType dtype = DType::kBFloat16;
  Tensor positions = positions_gpu(random_positions(64, 128, next_seed()), DType::kInt64);
  Tensor query = random_gpu({64, 32, 128}, dtype, next_seed());
  Tensor key = random_gpu({64, 8, 128}, dtype, next_seed());
  Tensor cache = random_gpu({128, 128}, dtype, next_seed());
  op(positions, query, key, cache);  // warm-up: the entry is built outside the capture
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  op(positions, query, key, cache);
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  positions.copy_from(positions_gpu(random_positions(64, 128, next_seed()), DType::kInt64));
  query.copy_from(random_host({64, 32, 128}, dtype, next_seed()));
  key.copy_from(random_host({64, 8, 128}, dtype, next_seed()));
  const references::Inputs before = host_inputs({positions, query, key, cache});
  ASSERT_EQ(cudaGraphLaunch(exec, s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  expect_matches_reference(op, before, {positions, query, key, cache}, {});
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(CudaRope, ACapturedCallReplaysOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  capture_and_replay(false);
}

TEST(CudaRope, ACallIsCapturedInTheCheckingModeToo) {
  TILEOPS_REQUIRE_CUDA();
  capture_and_replay(true);
}

// ---- Sizes past 32-bit indexing
// ------------------------------------------------------------------

// Rotates a float16 query [n, hq, d] too large to compare whole (every element one constant but
// the first and last tokens' rows, which are random) with a key of hk heads, over the full width d
// and a 64-row cache; checks the implementation taken and those two tokens against the reference.
void check_first_and_last_tokens(std::int64_t n, std::int64_t hq, std::int64_t hk, std::int64_t d,
                                 const std::string& implementation) {
  const DType dtype = DType::kFloat16;
  const std::int64_t rows = 64;
  Tensor query = Tensor::empty({n, hq, d}, dtype, gpu());
  // The allocation is ordered on the library's stream; the legacy stream's memset waits for it.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemset(query.data_ptr(), 0x3C, static_cast<std::size_t>(query.nbytes())),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto token_bytes = static_cast<std::int64_t>(hq * d * dtype_size(dtype));
  auto token_view = [&](std::int64_t t) {
    return query.as_strided({1, hq, d}, {hq * d, d, 1}, t * token_bytes);
  };
  for (std::int64_t t : {std::int64_t{0}, n - 1})
    token_view(t).copy_from(random_host({1, hq, d}, dtype, next_seed()));
  const Tensor key = random_gpu({n, hk, d}, dtype, next_seed());
  const Tensor cache = random_gpu({rows, d}, dtype, next_seed());
  const std::vector<std::int64_t> positions = random_positions(n, rows, next_seed());
  const references::HostTensor c = host_values(cache);
  std::vector<references::HostTensor> before;
  for (std::int64_t t : {std::int64_t{0}, n - 1}) before.push_back(host_values(token_view(t)));

  RopeFwdOp op;
  op(positions_gpu(positions, DType::kInt64), query, key, cache);
  EXPECT_EQ(only_key(op, "rope"), implementation);
  std::size_t i = 0;
  for (std::int64_t t : {std::int64_t{0}, n - 1}) {
    const references::Expected e = expected_skipping_bad(
        before[i++], {positions[static_cast<std::size_t>(t)]}, c, true, "query");
    const std::vector<double> got = host_values(token_view(t)).values;
    const references::Tolerance tol = references::tolerance(dtype);
    const references::Comparison cmp = references::compare(got, e, tol);
    EXPECT_TRUE(cmp.ok()) << "token " << t << ": " << cmp.str(got, e.values, tol);
  }
}

// query [131073, 128, 128] of float16: 2^31 + 2^14 elements, offsets past 32 bits.
TEST(CudaRope, SizesPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  check_first_and_last_tokens(131073, 128, 1, 128, "rope_neox_vector_sm90");
}

// query [2^24 + 1, 128, 2] of float16 on the general path (one pair per chunk): 2^31 + 128
// chunks, so the kernel indexes in 64 bits (Note [RoPE kernels]); the last token's chunks lie at
// 2^31 and past. With 32-bit indices the grid-stride step would wrap and rotate the first tokens
// twice.
TEST(CudaRope, ChunkCountsPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  check_first_and_last_tokens((std::int64_t{1} << 24) + 1, 128, 0, 2, "rope_general_sm90");
}

}  // namespace
}  // namespace tileops::test_cuda
