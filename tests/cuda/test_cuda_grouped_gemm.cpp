// GroupedGemmFwdOp on the GPU against a float64 oracle written here over the rounded inputs: both
// dtypes and both layouts of w, empty groups, one group holding every row, rows past the last end
// (written 0), more groups than a block scans at once, odd M, K and N off the 16-byte vectors and
// misaligned views (the general variant), many expert-sized groups (CUTLASS's kernel), each
// implementation forced, bad offsets (clamped and
// memory-safe without the checking mode, CheckError naming offsets with it), empty outputs and a
// CUDA-graph replay. Outputs are poisoned (NaN) before every call.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/kernel_checks.hpp"
#include "cuda_testing.hpp"
#include "test_stream.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 9100;
  return seed++;
}

const DType kDTypes[] = {DType::kBFloat16, DType::kFloat16};
constexpr const char* kCutlassKey = "grouped_gemm_cutlass_sm90";
constexpr const char* kVectorKey = "grouped_gemm_sm90";
constexpr const char* kGeneralKey = "grouped_gemm_general_sm90";

Tensor offsets_host(const std::vector<std::int64_t>& ends) {
  Tensor host = Tensor::empty({static_cast<std::int64_t>(ends.size())}, DType::kInt32);
  for (std::size_t g = 0; g < ends.size(); ++g)
    host.data<std::int32_t>()[g] = static_cast<std::int32_t>(ends[g]);
  return host;
}

Tensor offsets_gpu(const std::vector<std::int64_t>& ends) {
  return offsets_host(ends).to(gpu(), DType::kInt32);
}

// One call's geometry: x [m, k], w [ends.size(), k, n], offsets = ends.
struct Geometry {
  std::int64_t m = 0, k = 0, n = 0;
  std::vector<std::int64_t> ends;
  bool column_major = false;       // w: the transposed view of an [E, n, k] tensor
  std::int64_t x_byte_offset = 0;  // x at this offset from a 16-byte boundary
};

// The inputs on the device, and the host values the oracle reads.
struct Problem {
  Geometry g;
  Tensor x, w, offsets;
  std::vector<double> x_values;  // [m, k]
  std::vector<double> w_values;  // as stored: [E, k, n] or, column-major, [E, n, k]
};

Problem make_problem(const Geometry& g, DType dtype) {
  Problem p{g, {}, {}, offsets_gpu(g.ends), {}, {}};
  const auto e = static_cast<std::int64_t>(g.ends.size());
  const Tensor x = random_host({g.m, g.k}, dtype, next_seed());
  p.x_values = host_values(x).values;
  p.x = g.x_byte_offset == 0 ? x.to(gpu(), dtype) : view_at_offset(x, g.x_byte_offset);
  const Tensor w =
      random_host(g.column_major ? Shape{e, g.n, g.k} : Shape{e, g.k, g.n}, dtype, next_seed());
  p.w_values = host_values(w).values;
  p.w = w.to(gpu(), dtype);
  if (g.column_major) p.w = p.w.as_strided({e, g.k, g.n}, {g.n * g.k, 1, g.k}, 0);
  return p;
}

// The manifest's semantics with each end clamped into [previous end, M] (what the CUDA kernel
// computes whatever offsets holds): the values and, per element, sum_k |x| |w|, the scale of its
// rounding error.
struct Expected {
  std::vector<double> values, scale;
};

Expected oracle(const Problem& p) {
  const Geometry& g = p.g;
  Expected e{std::vector<double>(static_cast<std::size_t>(g.m * g.n), 0.0),
             std::vector<double>(static_cast<std::size_t>(g.m * g.n), 0.0)};
  std::int64_t begin = 0;
  for (std::size_t group = 0; group < g.ends.size(); ++group) {
    const std::int64_t end = std::clamp(g.ends[group], begin, g.m);
    const auto gi = static_cast<std::int64_t>(group);
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t n = 0; n < g.n; ++n) {
        double sum = 0, scale = 0;
        for (std::int64_t k = 0; k < g.k; ++k) {
          const double xv = p.x_values[static_cast<std::size_t>(r * g.k + k)];
          const std::int64_t wi =
              g.column_major ? (gi * g.n + n) * g.k + k : (gi * g.k + k) * g.n + n;
          const double wv = p.w_values[static_cast<std::size_t>(wi)];
          sum += xv * wv;
          scale += std::abs(xv * wv);
        }
        e.values[static_cast<std::size_t>(r * g.n + n)] = sum;
        e.scale[static_cast<std::size_t>(r * g.n + n)] = scale;
      }
    begin = end;
  }
  return e;
}

// |got - want| <= rtol(dtype) * sum_k |x| |w| + atol everywhere; rows past the last end exactly 0.
void expect_close(const Tensor& out, const Expected& want, DType dtype) {
  const std::vector<double> got = host_values(out).values;
  ASSERT_EQ(got.size(), want.values.size());
  const references::Tolerance tol = references::tolerance(dtype);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double allowed = want.scale[i] == 0 ? 0.0 : tol.rtol * want.scale[i] + tol.atol;
    if (!(std::abs(got[i] - want.values[i]) <= allowed) && bad++ == 0) first = i;
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << got.size() << " elements out of tolerance; first at "
                     << first << ": got " << got[first] << ", want " << want.values[first];
}

// Runs `op` on fresh inputs of `g` into a poisoned output and checks it; returns the key of the
// entry the call built.
std::string check_grouped(GroupedGemmFwdOp& op, const Geometry& g, DType dtype) {
  const Problem p = make_problem(g, dtype);
  Tensor out = poisoned_gpu({g.m, g.n}, dtype);
  op(p.x, p.w, p.offsets, {out});
  expect_close(out, oracle(p), dtype);
  return only_key(op, "grouped_gemm");
}

std::string trace(const Geometry& g, DType dtype) {
  return fmt::format("{} M={} K={} N={} E={} column_major={} x_offset={}", dtype_name(dtype), g.m,
                     g.k, g.n, g.ends.size(), g.column_major, g.x_byte_offset);
}

// Increasing random ends over m rows, some groups empty, the last below m when `tail`.
std::vector<std::int64_t> random_ends(std::int64_t groups, std::int64_t m, bool tail) {
  std::mt19937_64 rng(next_seed());
  std::uniform_int_distribution<std::int64_t> row(0, tail ? m - m / 8 : m);
  std::vector<std::int64_t> ends(static_cast<std::size_t>(groups));
  for (auto& e : ends) e = row(rng);
  std::sort(ends.begin(), ends.end());
  if (!tail) ends.back() = m;
  return ends;
}

TEST(CudaGroupedGemm, EveryDtypeAndWeightLayout) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kDTypes)
    for (bool column_major : {false, true}) {
      // Odd M, an empty group, a group smaller than a tile, rows 280..300 past the last end.
      const Geometry g{301, 264, 272, {50, 50, 191, 280}, column_major, 0};
      SCOPED_TRACE(trace(g, dtype));
      GroupedGemmFwdOp op;
      EXPECT_EQ(check_grouped(op, g, dtype), kCutlassKey);
    }
}

TEST(CudaGroupedGemm, GroupShapes) {
  TILEOPS_REQUIRE_CUDA();
  const Geometry shapes[] = {
      {517, 128, 256, {517}, false, 0},                        // one group holding every row
      {300, 64, 136, {0, 0, 0, 0, 300}, true, 0},              // every row in the last group
      {200, 64, 64, {0, 0, 0}, false, 0},                      // every group empty: all zeros
      {1, 512, 128, {0, 1, 1}, true, 0},                       // decode: one row
      {1000, 64, 64, random_ends(300, 1000, true), false, 0},  // more groups than threads
      {700, 96, 200, random_ends(37, 700, false), true, 0},
      {129, 40, 8, {1, 2, 3, 127, 128}, false, 0},             // one-row groups, N below a tile
      {64, 8, 8, {30, 64}, true, 0},                           // K and N of one 16-byte vector
      {3000, 64, 264, {100, 700}, false, 0},                   // 2300 rows past the last end
      {777, 520, 136, random_ends(256, 777, false), true, 0},  // 256 groups, K past a K-step
  };
  for (DType dtype : kDTypes)
    for (const Geometry& g : shapes) {
      SCOPED_TRACE(trace(g, dtype));
      GroupedGemmFwdOp op;
      EXPECT_EQ(check_grouped(op, g, dtype), kCutlassKey);
    }
}

// The shapes CUTLASS's grouped kernel is there for, one for each of its schedules (Note [Grouped
// GEMM schedules] in grouped_gemm_cutlass.cuh): many groups of around a tile of rows (a mixture of
// experts' routed tokens; random ends, 130 rows a group on average) and a few groups of hundreds
// of rows (256 or more on average: the paired-CTA schedule), both over a long K.
TEST(CudaGroupedGemm, ExpertShapedGroups) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kDTypes)
    for (bool column_major : {false, true})
      for (const auto& [groups, rows_per_group] : {std::pair{32, 130}, std::pair{4, 600}}) {
        const std::int64_t m = groups * rows_per_group;
        const Geometry g{m, 1024, 128, random_ends(groups, m, false), column_major, 0};
        SCOPED_TRACE(trace(g, dtype));
        GroupedGemmFwdOp op;
        EXPECT_EQ(check_grouped(op, g, dtype), kCutlassKey);
      }
}

// Each implementation forced on shapes it claims; the vector variant forced on a call it does
// not claim fails with its refusal.
TEST(CudaGroupedGemm, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  for (const char* key : {kCutlassKey, kVectorKey, kGeneralKey})
    for (DType dtype : kDTypes)
      for (bool column_major : {false, true}) {
        const Geometry g{263, 200, 144, {0, 100, 100, 250}, column_major, 0};
        SCOPED_TRACE(fmt::format("{} {}", key, trace(g, dtype)));
        EnvGuard force("TILEOPS_FORCE", key);
        GroupedGemmFwdOp op;
        EXPECT_EQ(check_grouped(op, g, dtype), key);
      }

  struct Refused {
    const char* key;
    Geometry g;
    const char* reason;
  };
  for (const Refused& r : {
           Refused{kVectorKey, {20, 13, 16, {10, 20}, false, 0}, "rows of 26 bytes"},
           Refused{kVectorKey, {20, 16, 12, {10, 20}, true, 0}, "rows of 24 bytes"},
           Refused{kVectorKey, {20, 16, 16, {10, 20}, false, 2}, "aligned to 2 bytes"},
           Refused{kCutlassKey, {20, 13, 16, {10, 20}, false, 0}, "rows of 26 bytes"},
           Refused{kCutlassKey, {20, 16, 12, {10, 20}, true, 0}, "rows of 24 bytes"},
           Refused{kCutlassKey, {20, 16, 16, {10, 20}, false, 2}, "aligned to 2 bytes"},
           Refused{kCutlassKey, {20, 0, 16, {10, 20}, false, 0}, "K = 0: no main loop"},
       }) {
    SCOPED_TRACE(fmt::format("{}: {}", r.key, r.reason));
    EnvGuard force("TILEOPS_FORCE", r.key);
    GroupedGemmFwdOp op;
    const Problem p = make_problem(r.g, DType::kBFloat16);
    const std::string error = error_of<SelectionError>([&] { op(p.x, p.w, p.offsets); });
    EXPECT_NE(error.find(std::string("TILEOPS_FORCE=") + r.key + " refuses this call"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(r.reason), std::string::npos) << error;
  }
}

// CUTLASS counts its problem shapes and groups in int: a call whose K or N is past int goes to the
// wmma kernel, which counts in 64 bits. Stated without a GPU (explain_call on meta tensors).
TEST(CudaGroupedGemm, CutlassRefusesSizesPastInt) {
  const std::int64_t past = std::int64_t{std::numeric_limits<int>::max()} + 1;
  for (const auto& [k, n] : {std::pair<std::int64_t, std::int64_t>{past, 8}, {8, past}}) {
    SCOPED_TRACE(fmt::format("K = {}, N = {}", k, n));
    const std::optional<Tensor> inputs[] = {Tensor::meta({1, k}, DType::kBFloat16),
                                            Tensor::meta({1, k, n}, DType::kBFloat16),
                                            Tensor::meta({1}, DType::kInt32)};
    GroupedGemmFwdOp op;
    const std::vector<DispatchEvent> events =
        op.explain_call(inputs, Device::cuda(0), DeviceFacts{90, 132, 0});
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].winner, kVectorKey);
    const auto cutlass = std::find_if(events[0].verdicts.begin(), events[0].verdicts.end(),
                                      [](const auto& v) { return v.key == kCutlassKey; });
    ASSERT_NE(cutlass, events[0].verdicts.end());
    EXPECT_EQ(cutlass->kind, VerdictKind::kRefuses);
    EXPECT_NE(cutlass->reason.find("past CUTLASS's int problem shapes"), std::string::npos)
        << cutlass->reason;
  }
}

// ---- Bad offsets -------------------------------------------------------------------------------

// Offsets that break the contract: negative, decreasing, past M, the int32 extremes.
const std::vector<std::int64_t> kBadEnds[] = {
    {-5, 40, 20, 1000},
    {std::numeric_limits<std::int32_t>::max(), 3, 5},
    {std::numeric_limits<std::int32_t>::min(), 10, -1, 64},
    {64, 0, 65},
};

TEST(CudaGroupedGemm, BadOffsetsAreClampedWithoutTheCheckingMode) {
  TILEOPS_REQUIRE_CUDA();
  for (const char* key : {kCutlassKey, kVectorKey, kGeneralKey})
    for (DType dtype : kDTypes)
      for (bool column_major : {false, true})
        for (const auto& ends : kBadEnds) {
          const Geometry g{64, 64, 40, ends, column_major, 0};
          SCOPED_TRACE(fmt::format("{} {} ends {}", key, trace(g, dtype), fmt::join(ends, ",")));
          EnvGuard force("TILEOPS_FORCE", key);
          GroupedGemmFwdOp op;
          check_grouped(op, g, dtype);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        }
}

TEST(CudaGroupedGemm, TheCheckingModeRaisesForTheFirstBadOffset) {
  TILEOPS_REQUIRE_CUDA();
  CheckingMode checking;
  struct Case {
    std::vector<std::int64_t> ends;
    const char* message;
  };
  std::vector<std::int64_t> late(300, 64);
  late[280] = 63;  // decreasing, in the second chunk of groups a block scans
  late[299] = 70;
  for (const Case& c : {
           Case{{10, -1, 20}, "GroupedGemmFwdOp: offsets[1] = -1 is negative"},
           Case{{10, 5, 20},
                "GroupedGemmFwdOp: offsets[1] = 5 is below offsets[0]; offsets must be "
                "non-decreasing"},
           Case{{10, 20, 65, -3}, "GroupedGemmFwdOp: offsets[2] = 65 is past the 64 rows of x"},
           Case{late,
                "GroupedGemmFwdOp: offsets[280] = 63 is below offsets[279]; offsets must be "
                "non-decreasing"},
       })
    for (const char* key : {kCutlassKey, kVectorKey, kGeneralKey}) {
      SCOPED_TRACE(fmt::format("{} {}", c.message, key));
      EnvGuard force("TILEOPS_FORCE", key);
      GroupedGemmFwdOp op;
      const Problem p = make_problem({64, 64, 32, c.ends, false, 0}, DType::kBFloat16);
      EXPECT_EQ(error_of<CheckError>([&] { op(p.x, p.w, p.offsets); }), c.message);
      // The record was reset: a good call passes.
      check_grouped(op, {64, 64, 32, std::vector<std::int64_t>(c.ends.size(), 64), false, 0},
                    DType::kBFloat16);
    }
  // A call whose output is empty writes nothing and runs no kernel (docs/seeds.md,
  // construction-and-calls Table 3, step 3), so its offsets are not read, as on the CPU.
  GroupedGemmFwdOp op;
  EXPECT_EQ(error_of<CheckError>([&] {
              op(Tensor::empty({0, 16}, DType::kBFloat16, gpu()),
                 random_gpu({2, 16, 8}, DType::kBFloat16, next_seed()), offsets_gpu({0, 1}));
            }),
            "<no error>");
}

TEST(CudaGroupedGemm, EmptyOutputsAndEmptySums) {
  TILEOPS_REQUIRE_CUDA();
  GroupedGemmFwdOp op;
  const Tensor none =
      op(Tensor::empty({0, 16}, DType::kBFloat16, gpu()),
         random_gpu({3, 16, 8}, DType::kBFloat16, next_seed()), offsets_gpu({0, 0, 0}));
  EXPECT_EQ(none.shape(), Shape({0, 8}));
  const Tensor narrow = op(random_gpu({5, 16}, DType::kBFloat16, next_seed()),
                           Tensor::empty({2, 16, 0}, DType::kBFloat16, gpu()), offsets_gpu({2, 5}));
  EXPECT_EQ(narrow.shape(), Shape({5, 0}));
  // K = 0: every row of a group is an empty sum.
  GroupedGemmFwdOp empty_k;
  check_grouped(empty_k, {9, 0, 16, {4, 6}, false, 0}, DType::kFloat16);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CudaGroupedGemm, GraphCaptureAndReplay) {
  TILEOPS_REQUIRE_CUDA();
  TestStream s;
  const DType dtype = DType::kBFloat16;
  const Geometry g{333, 128, 192, {100, 100, 300}, true, 0};
  Problem p = make_problem(g, dtype);
  Tensor out = poisoned_gpu({g.m, g.n}, dtype);
  GroupedGemmFwdOp op;
  op(p.x, p.w, p.offsets, {out});  // warm-up: the entry is built outside the capture
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  op(p.x, p.w, p.offsets, {out});
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  // New rows and new group ends in the captured buffers, then one replay.
  const Tensor new_x = random_host({g.m, g.k}, dtype, next_seed());
  p.x.copy_from(new_x);
  p.x_values = host_values(new_x).values;
  p.g.ends = {7, 250, 260};
  p.offsets.copy_from(offsets_host(p.g.ends));
  out.copy_from(poisoned_gpu({g.m, g.n}, dtype));
  ASSERT_EQ(cudaGraphLaunch(exec, s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  expect_close(out, oracle(p), dtype);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace tileops::test_cuda
