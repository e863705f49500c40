// The reduction family on the GPU against the float64 references: softmax and log_softmax over
// the last axis (row lengths that reach each path, lengths that are no multiple of a vector, a
// few vocabulary-long rows split across blocks) and over other axes; sum, mean and amax over the
// last axes, leading axes, every axis and axes that are not adjacent, with keepdim; one row,
// empty tensors, scalars, 3-D and 4-D inputs, non-contiguous and misaligned views, outputs
// poisoned before each run; the rows paths' row lengths at and past each limit; every
// implementation forced on the shapes it claims and refusing one it does not; one CUDA-graph
// replay.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 9000;
  return seed++;
}

// ---- softmax, log_softmax ------------------------------------------------------------------

// Row lengths: 1, 7 (no vector), 64 and 1000 (narrow and full warps; 1000 is no multiple of a
// float16 vector), 4097 (odd), 8192, 16384 and 32768 (a block holds up to 32768 16-bit or 16384
// float32 elements), 40000 and 128256 (Llama-3's vocabulary; the online path).
const std::int64_t kRowLengths[] = {1, 7, 64, 1000, 4097, 8192, 16384, 32768, 40000, 128256};

std::int64_t rows_for(std::int64_t n) { return n >= 32768 ? 3 : n >= 4097 ? 9 : 33; }

// Runs softmax (or log_softmax) along `dim` of a fresh x of `shape` into a poisoned buffer and
// checks it; returns the key of the entry the call built.
std::string check_softmax(bool log, const Shape& shape, std::int64_t dim, DType dtype,
                          double scale = 3.0) {
  const Tensor x = random_gpu(shape, dtype, next_seed(), scale);
  const Tensor out = poisoned_gpu(shape, dtype);
  if (log) {
    LogSoftmaxFwdOp op(dim);
    run_and_check(op, {x}, CallOptions{out});
    return only_key(op, "log_softmax");
  }
  SoftmaxFwdOp op(dim);
  run_and_check(op, {x}, CallOptions{out});
  return only_key(op, "softmax");
}

TEST(CudaSoftmax, EveryDtypeAndRowLength) {
  TILEOPS_REQUIRE_CUDA();
  for (bool log : {false, true})
    for (DType dtype : kFloatDTypes)
      for (std::int64_t n : kRowLengths) {
        SCOPED_TRACE(fmt::format("log={} {} n={}", log, dtype_name(dtype), n));
        check_softmax(log, {rows_for(n), n}, -1, dtype);
      }
}

// The register path holds a block's row in registers, or stages it in shared memory when it is
// 16 KB or longer or the call has fewer rows than multiprocessors (Note [Staged rows]): rows on
// both sides of each bound, the longest a block holds among them.
TEST(CudaSoftmax, RowsStagedOrHeldInRegisters) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t many = 2 * device_facts(gpu()).sm_count + 7;
  for (bool log : {false, true})
    for (DType dtype : kFloatDTypes)
      for (std::int64_t n : {2048, 4096, 8192, 16384})
        for (std::int64_t rows : {std::int64_t{1}, std::int64_t{5}, many}) {
          if (n * static_cast<std::int64_t>(dtype_size(dtype)) >= 64 * 1024) continue;
          SCOPED_TRACE(fmt::format("log={} {} n={} rows={}", log, dtype_name(dtype), n, rows));
          EXPECT_EQ(check_softmax(log, {rows, n}, -1, dtype),
                    fmt::format("{}softmax_registers_sm90", log ? "log_" : ""));
        }
}

TEST(CudaSoftmax, OneRowAndHigherRanks) {
  TILEOPS_REQUIRE_CUDA();
  for (bool log : {false, true})
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(fmt::format("log={} {}", log, dtype_name(dtype)));
      check_softmax(log, {1, 4096}, -1, dtype);
      check_softmax(log, {1, 1}, 1, dtype);
      check_softmax(log, {2, 3, 5, 256}, 3, dtype);  // 4-D, the last axis
      check_softmax(log, {2, 3, 5, 256}, -4, dtype);
    }
}

TEST(CudaSoftmax, FewLongRowsAreSplitAcrossBlocks) {
  TILEOPS_REQUIRE_CUDA();
  for (bool log : {false, true})
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(fmt::format("log={} {}", log, dtype_name(dtype)));
      EXPECT_EQ(check_softmax(log, {4, 128256}, -1, dtype),
                fmt::format("{}softmax_online_sm90", log ? "log_" : ""));
      check_softmax(log, {1, 300001}, -1, dtype);  // odd: one element per access
      // Large values: the running maximum grows along the row and the sums are rescaled.
      check_softmax(log, {2, 70000}, -1, dtype, 30.0);
    }
}

TEST(CudaSoftmax, OtherAxesAreStrided) {
  TILEOPS_REQUIRE_CUDA();
  for (bool log : {false, true})
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(fmt::format("log={} {}", log, dtype_name(dtype)));
      const std::string key = fmt::format("{}softmax_strided_sm90", log ? "log_" : "");
      EXPECT_EQ(check_softmax(log, {4, 257, 32}, 1, dtype), key);  // the attention-weights layout
      EXPECT_EQ(check_softmax(log, {3, 5, 7, 9}, 0, dtype), key);
      EXPECT_EQ(check_softmax(log, {3, 5, 7, 9}, 2, dtype), key);
      EXPECT_EQ(check_softmax(log, {2, 1000, 33}, -2, dtype), key);  // columns past a tile
    }
}

TEST(CudaSoftmax, SelectionByAxisLength) {
  TILEOPS_REQUIRE_CUDA();
  struct Case {
    std::int64_t n;
    DType dtype;
    const char* key;
  };
  for (const Case& c : {Case{7, DType::kBFloat16, "softmax_registers_sm90"},
                        Case{16383, DType::kFloat32, "softmax_registers_sm90"},
                        Case{16384, DType::kFloat32, "softmax_online_sm90"},
                        Case{32767, DType::kBFloat16, "softmax_registers_sm90"},
                        Case{32768, DType::kBFloat16, "softmax_online_sm90"}}) {
    SCOPED_TRACE(fmt::format("n={} {}", c.n, dtype_name(c.dtype)));
    EXPECT_EQ(check_softmax(false, {2, c.n}, -1, c.dtype), c.key);
  }
}

TEST(CudaSoftmax, EmptyTensorsAndScalars) {
  TILEOPS_REQUIRE_CUDA();
  SoftmaxFwdOp op;
  EXPECT_EQ(op(Tensor::empty({0, 64}, DType::kBFloat16, gpu())).shape(), (Shape{0, 64}));
  EXPECT_EQ(op(Tensor::empty({5, 0}, DType::kFloat32, gpu())).shape(), (Shape{5, 0}));
  LogSoftmaxFwdOp along0(0);
  EXPECT_EQ(along0(Tensor::empty({0, 3}, DType::kFloat16, gpu())).shape(), (Shape{0, 3}));
  for (bool log : {false, true}) check_softmax(log, Shape{}, 0, DType::kFloat32);
}

TEST(CudaSoftmax, NonContiguousAndMisalignedViews) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = random_gpu({1024, 6}, dtype, next_seed());
    const Tensor transposed = base.as_strided({6, 1024}, {1, 6}, 0);
    ASSERT_FALSE(transposed.is_contiguous());
    SoftmaxFwdOp op;
    run_and_check(op, {transposed});
    // One element past a 16-byte boundary: every innermost call takes the general path.
    const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
    for (std::int64_t n : {64, 5000, 40000}) {
      const Tensor x = view_at_offset(random_host({3, n}, dtype, next_seed()), offset);
      SoftmaxFwdOp misaligned;
      run_and_check(misaligned, {x}, CallOptions{poisoned_gpu({3, n}, dtype)});
      EXPECT_EQ(only_key(misaligned, "softmax"), "softmax_general_sm90");
      LogSoftmaxFwdOp log_misaligned;
      run_and_check(log_misaligned, {random_gpu({3, n}, dtype, next_seed())},
                    CallOptions{view_at_offset(random_host({3, n}, dtype, next_seed()), offset)});
      EXPECT_EQ(only_key(log_misaligned, "log_softmax"), "log_softmax_general_sm90");
    }
    // Another axis of a misaligned view: the strided path reads one element at a time.
    const Tensor x = view_at_offset(random_host({3, 100, 20}, dtype, next_seed()), offset);
    EXPECT_EQ(check_softmax(false, {3, 100, 20}, 1, dtype), "softmax_strided_sm90");
    SoftmaxFwdOp strided(1);
    run_and_check(strided, {x});
    EXPECT_EQ(only_key(strided, "softmax"), "softmax_strided_sm90");
  }
}

// Attention rows masked with -inf before the first kept key: the masked entries get 0 and the
// rest the softmax of the kept ones, on every path (a running maximum that starts at -inf must not
// meet exp(-inf - -inf)).
TEST(CudaSoftmax, MaskedPrefixesOfMinusInfinityAndNaN) {
  TILEOPS_REQUIRE_CUDA();
  struct Case {
    const char* path;
    Shape shape;
    std::int64_t dim;
  };
  for (const Case& c : {Case{"registers", {4, 1000}, -1}, Case{"registers", {3, 8192}, -1},
                        Case{"online", {3, 40000}, -1}, Case{"online", {2, 128256}, -1},
                        Case{"strided", {2, 300, 40}, 1}, Case{"general", {3, 4097}, -1}})
    for (DType dtype : kFloatDTypes) {
      const std::string key = fmt::format("softmax_{}_sm90", c.path);
      SCOPED_TRACE(fmt::format("{} {} {}", key, dtype_name(dtype), c.shape.str()));
      EnvGuard force("TILEOPS_FORCE", key);
      Tensor host = random_host(c.shape, dtype, next_seed(), 3.0);
      // The first 60% of every row along `dim` is masked.
      const std::int64_t axis = c.dim < 0 ? static_cast<std::int64_t>(c.shape.size()) - 1 : c.dim;
      const std::int64_t length = c.shape[static_cast<std::size_t>(axis)];
      std::int64_t inner = 1;
      for (std::size_t k = static_cast<std::size_t>(axis) + 1; k < c.shape.size(); ++k)
        inner *= c.shape[k];
      auto* bytes = static_cast<unsigned char*>(host.data_ptr());
      for (std::int64_t i = 0; i < host.numel(); ++i)
        if ((i / inner) % length < length * 6 / 10)
          store_from_double(dtype, -std::numeric_limits<double>::infinity(),
                            bytes + i * static_cast<std::int64_t>(host.itemsize()));
      SoftmaxFwdOp op(c.dim);
      run_and_check(op, {host.to(gpu(), dtype)}, CallOptions{poisoned_gpu(c.shape, dtype)});
      EXPECT_EQ(only_key(op, "softmax"), key);
      // A NaN makes its row along `dim` NaN and no other: in the first row where the mask begins
      // (before anything finite: a thread's or chunk's first value), in the second past the mask.
      // The statistics' merges carry it through the sums (Note [Softmax statistics]).
      const std::int64_t itemsize = static_cast<std::int64_t>(host.itemsize());
      const double nan = std::numeric_limits<double>::quiet_NaN();
      store_from_double(dtype, nan, bytes);
      store_from_double(dtype, nan, bytes + (length + length * 7 / 10) * inner * itemsize);
      const Tensor out = poisoned_gpu(c.shape, dtype);
      op(host.to(gpu(), dtype), {out});
      const std::vector<double> got = host_values(out).values;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const auto at = static_cast<std::int64_t>(i);
        const bool nan_row = at / (length * inner) < 2 && at % inner == 0;
        ASSERT_EQ(std::isnan(got[i]), nan_row) << "element " << i;
      }
    }
}

TEST(CudaSoftmax, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  struct Claim {
    const char* path;
    std::vector<Shape> shapes;
    std::int64_t dim;
  };
  const Claim claims[] = {
      {"registers", {{5, 64}, {5, 1000}, {3, 8192}, {2, 4097}}, -1},
      {"online", {{5, 64}, {3, 8192}, {2, 40000}, {4, 128256}, {2, 4097}}, -1},
      {"strided", {{3, 64, 5}, {2, 300, 40}}, 1},
      {"general", {{5, 64}, {2, 4097}, {2, 40000}, {3, 64, 5}}, -1},
  };
  for (const Claim& claim : claims)
    for (bool log : {false, true})
      for (DType dtype : kFloatDTypes)
        for (const Shape& shape : claim.shapes) {
          const std::string key = fmt::format("{}softmax_{}_sm90", log ? "log_" : "", claim.path);
          SCOPED_TRACE(fmt::format("{} {} {}", key, dtype_name(dtype), shape.str()));
          EnvGuard force("TILEOPS_FORCE", key);
          const std::int64_t dim = shape.size() == 3 ? 1 : claim.dim;
          EXPECT_EQ(check_softmax(log, shape, dim, dtype), key);
        }
  // Refusals name their reason, and write nothing.
  struct Refusal {
    const char* key;
    Shape shape;
    std::int64_t dim;
    std::int64_t byte_offset;
    const char* reason;
  };
  for (const Refusal& r :
       {Refusal{"softmax_registers_sm90", {3, 1024}, -1, 2, "aligned to 2 bytes"},
        Refusal{"softmax_registers_sm90", {2, 40000}, -1, 0, "in registers"},
        Refusal{"softmax_online_sm90", {3, 1024}, -1, 2, "aligned to 2 bytes"},
        Refusal{"softmax_online_sm90", {3, 64, 5}, 1, 0, "not the last one"},
        Refusal{"softmax_strided_sm90", {3, 1024}, -1, 0, "is the last one"}}) {
    SCOPED_TRACE(r.key);
    EnvGuard force("TILEOPS_FORCE", r.key);
    SoftmaxFwdOp op(r.dim);
    const Tensor x =
        view_at_offset(random_host(r.shape, DType::kBFloat16, next_seed()), r.byte_offset);
    const Tensor out = poisoned_gpu(r.shape, DType::kBFloat16);
    const std::string error = error_of<SelectionError>([&] { op(x, {out}); });
    EXPECT_NE(error.find(fmt::format("TILEOPS_FORCE={} refuses this call", r.key)),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(r.reason), std::string::npos) << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  }
}

// ---- sum, mean, amax -------------------------------------------------------------------------

struct Reduction {
  Shape shape;
  std::optional<Shape> dim;
  bool keepdim = false;
};

// The layouts: rows (a warp, a block, split chunks), columns (narrow and split, wide), every axis,
// axes that are not adjacent, axes of length 1, dims at both ends and in any order, scalars.
const Reduction kReductions[] = {
    {{33, 4096}, Shape{-1}},
    {{9, 4097}, Shape{1}, true},
    {{5, 20000}, Shape{-1}},
    {{2, 70001}, Shape{1}},        // few long odd rows: chunks, one element per access
    {{64, 1000}, Shape{0}},        // columns
    {{3000, 24}, Shape{0}, true},  // narrow columns: the steps split across blocks
    {{2048, 520}, Shape{0}},       // split columns, three tiles, the last partly idle
    {{3, 5, 7}, Shape{1}},
    {{4, 32, 256}, Shape{0, 2}},  // not adjacent: rows of several runs
    {{2, 3, 4, 5}, Shape{1, 3}, true},
    {{2, 3, 4, 5}, Shape{0, 2}},      // not adjacent, the innermost kept
    {{64, 4, 32, 256}, Shape{0, 2}},  // the same, split across blocks
    {{6, 8, 10}, std::nullopt},
    {{70000}, Shape{}},          // every axis: chunks and a finishing kernel
    {{3, 70000}, std::nullopt},  // every axis, whole vectors: held chunks, the last shorter
    {{20000}, Shape{}},          // every axis: one held row (bf16), two chunks (float32)
    {{1, 262144}, Shape{-1}},    // one long row (the rows paths): held chunks
    {{5, 1, 7}, Shape{1}},
    {{5, 1, 8}, Shape{-1, 0}, true},
    {{1, 1}, Shape{0}},
    {{}, std::nullopt},
    {{}, Shape{0}, true},
};

// Whether the rows paths (<op>_rows_sm90) claim an aligned call of `r`: the reduced axes are the
// trailing ones, after at least one kept axis.
bool rows_claim(const Reduction& r) {
  const std::size_t rank = r.shape.size();
  if (rank == 0) return false;
  std::vector<bool> reduced(rank, !r.dim || r.dim->empty());
  if (r.dim)
    for (std::int64_t a : *r.dim)
      reduced[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(rank) : a)] = true;
  if (reduced[0] || !reduced[rank - 1]) return false;
  std::size_t first = rank - 1;
  while (first > 0 && reduced[first - 1]) --first;
  for (std::size_t a = 0; a < first; ++a)
    if (reduced[a]) return false;
  return true;
}

enum class Which { kSum, kMean, kAmax };

std::string_view name_of(Which which) {
  return which == Which::kSum ? "sum" : which == Which::kMean ? "mean" : "amax";
}

// A fresh input of `dtype`: standard normal floats, integers in [-1000, 1000].
Tensor reduction_input(const Shape& shape, DType dtype) {
  if (is_floating(dtype)) return random_gpu(shape, dtype, next_seed(), 2.0);
  std::mt19937_64 rng(next_seed());
  std::uniform_int_distribution<std::int64_t> value(-1000, 1000);
  Tensor host = Tensor::empty(shape, dtype);
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    if (dtype == DType::kInt32)
      host.data<std::int32_t>()[i] = static_cast<std::int32_t>(value(rng));
    else
      host.data<std::int64_t>()[i] = value(rng);
  }
  return host.to(gpu(), dtype);
}

// Calls the op on x, into `out` when given, checks the result and returns the built entry's key.
std::string check_reduction(Which which, const Reduction& r, const Tensor& x,
                            std::optional<Tensor> out = std::nullopt) {
  auto run = [&](Op& op) {
    run_and_check(op, {x}, out ? CallOptions{*out} : CallOptions{});
    return only_key(op, name_of(which));
  };
  switch (which) {
    case Which::kSum: {
      SumFwdOp op(r.dim, r.keepdim);
      return run(op);
    }
    case Which::kMean: {
      MeanFwdOp op(r.dim, r.keepdim);
      return run(op);
    }
    case Which::kAmax: {
      AmaxFwdOp op(r.dim, r.keepdim);
      return run(op);
    }
  }
  return "";
}

std::vector<DType> dtypes_of(Which which) {
  std::vector<DType> dtypes(std::begin(kFloatDTypes), std::end(kFloatDTypes));
  if (which == Which::kAmax) {
    dtypes.push_back(DType::kInt32);
    dtypes.push_back(DType::kInt64);
  }
  return dtypes;
}

TEST(CudaReduction, EveryOpDtypeAndLayout) {
  TILEOPS_REQUIRE_CUDA();
  for (Which which : {Which::kSum, Which::kMean, Which::kAmax})
    for (DType dtype : dtypes_of(which))
      for (const Reduction& r : kReductions) {
        SCOPED_TRACE(fmt::format("{} {} {} dim={} keepdim={}", name_of(which), dtype_name(dtype),
                                 r.shape.str(), r.dim ? r.dim->str() : "None", r.keepdim));
        EXPECT_EQ(check_reduction(which, r, reduction_input(r.shape, dtype)),
                  fmt::format("{}_{}_sm90", name_of(which), rows_claim(r) ? "rows" : "vector"));
      }
}

// The rows paths' lengths (Note [Held rows] in kernels/reduction/cuda/reduce_axes.cuh): the
// shortest row a block holds (128 vectors) and one vector less (the warp per row), a last warp
// partly idle, the longest rows held (4096 vectors: 32768 16-bit, 16384 float32 elements; 270
// rows, past the 2 * 132 under which the plan splits long rows) and a little more (the vector
// plan), trailing axes merged, keepdim, one row, many rows.
TEST(CudaReduction, RowsPathLengths) {
  TILEOPS_REQUIRE_CUDA();
  const Reduction rows[] = {
      {{40, 1024}, Shape{-1}},         {{40, 1016}, Shape{-1}},         {{7, 1032}, Shape{1}, true},
      {{270, 32768}, Shape{-1}},       {{270, 32776}, Shape{-1}},       {{270, 16384}, Shape{-1}},
      {{270, 16388}, Shape{-1}},       {{2, 3, 8, 600}, Shape{2, 3}},   {{1, 4096}, Shape{-1}},
      {{2048, 4096}, Shape{-1}, true}, {{600, 2, 2048}, Shape{-1, -2}},
  };
  for (Which which : {Which::kSum, Which::kMean, Which::kAmax})
    for (DType dtype : dtypes_of(which))
      for (const Reduction& r : rows) {
        SCOPED_TRACE(fmt::format("{} {} {}", name_of(which), dtype_name(dtype), r.shape.str()));
        EXPECT_EQ(check_reduction(which, r, reduction_input(r.shape, dtype)),
                  fmt::format("{}_rows_sm90", name_of(which)));
      }
}

TEST(CudaReduction, OutputsArePoisonedFirst) {
  TILEOPS_REQUIRE_CUDA();
  for (Which which : {Which::kSum, Which::kMean, Which::kAmax}) {
    SCOPED_TRACE(name_of(which));
    check_reduction(which, {{7, 4096}, Shape{-1}, true},
                    reduction_input({7, 4096}, DType::kBFloat16),
                    poisoned_gpu({7, 1}, DType::kBFloat16));
    check_reduction(which, {{300, 40}, Shape{0}}, reduction_input({300, 40}, DType::kFloat32),
                    poisoned_gpu({40}, DType::kFloat32));
    check_reduction(which, {{50000}, std::nullopt}, reduction_input({50000}, DType::kFloat16),
                    poisoned_gpu({}, DType::kFloat16));
  }
}

TEST(CudaReduction, EmptyInputs) {
  TILEOPS_REQUIRE_CUDA();
  // The sum of nothing is 0, the mean NaN; an empty output launches nothing.
  SumFwdOp sum(Shape{0});
  const Tensor zeros = sum(Tensor::empty({0, 5}, DType::kBFloat16, gpu()));
  for (double v : host_values(zeros).values) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(zeros.shape(), (Shape{5}));
  MeanFwdOp mean(Shape{1}, true);
  const Tensor nans = mean(Tensor::empty({3, 0}, DType::kFloat32, gpu()));
  EXPECT_EQ(nans.shape(), (Shape{3, 1}));
  for (double v : host_values(nans).values) EXPECT_TRUE(std::isnan(v));
  SumFwdOp rows(Shape{1});
  EXPECT_EQ(rows(Tensor::empty({0, 8}, DType::kFloat16, gpu())).shape(), (Shape{0}));
  // The maximum of nothing has no value: the signature refuses it, on any device.
  AmaxFwdOp amax(Shape{0});
  EXPECT_THROW(amax(Tensor::empty({0, 4}, DType::kFloat32, gpu())), Error);
  AmaxFwdOp amax_kept(Shape{1});
  EXPECT_EQ(amax_kept(Tensor::empty({0, 4}, DType::kFloat32, gpu())).shape(), (Shape{0}));
}

TEST(CudaReduction, AmaxPropagatesNaN) {
  TILEOPS_REQUIRE_CUDA();
  // One NaN near the end of the data (late in a row, column and chunk; an odd element, the second
  // of a pair), and one at element 2 (the first of a pair in the first vector). NaN outputs: the
  // two rows, the two columns, the one total.
  struct Case {
    Reduction r;
    int nan_outputs;
  };
  for (DType dtype : kFloatDTypes)
    for (const Case& c : {Case{{{6, 5000}, Shape{-1}}, 2}, Case{{{600, 16}, Shape{0}}, 2},
                          Case{{{9000}, std::nullopt}, 1}, Case{{{300, 4096}, Shape{-1}}, 2}}) {
      const Reduction& r = c.r;
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(dtype), r.shape.str()));
      Tensor host = random_host(r.shape, dtype, next_seed());
      Tensor nan = Tensor::empty({1}, dtype);
      store_from_double(dtype, std::numeric_limits<double>::quiet_NaN(), nan.data_ptr());
      for (std::int64_t at : {host.numel() - 17, std::int64_t{2}})
        std::memcpy(static_cast<unsigned char*>(host.data_ptr()) + at * host.itemsize(),
                    nan.data_ptr(), host.itemsize());
      AmaxFwdOp op(r.dim, r.keepdim);
      const Tensor y = op(host.to(gpu(), dtype));
      int nans = 0;
      for (double v : host_values(y).values) nans += std::isnan(v) ? 1 : 0;
      EXPECT_EQ(nans, c.nan_outputs);
      run_and_check(op, {host.to(gpu(), dtype)});
    }
}

TEST(CudaReduction, NonContiguousAndMisalignedViews) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = random_gpu({1024, 6}, dtype, next_seed());
    const Tensor transposed = base.as_strided({6, 1024}, {1, 6}, 0);
    for (Which which : {Which::kSum, Which::kMean, Which::kAmax}) {
      check_reduction(which, {{6, 1024}, Shape{-1}}, transposed);
      const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
      for (const Reduction& r : {Reduction{{5, 4096}, Shape{-1}}, Reduction{{300, 64}, Shape{0}},
                                 Reduction{{40000}, std::nullopt}}) {
        const Tensor x = view_at_offset(random_host(r.shape, dtype, next_seed()), offset);
        EXPECT_EQ(check_reduction(which, r, x), fmt::format("{}_general_sm90", name_of(which)));
      }
    }
  }
}

TEST(CudaReduction, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  for (Which which : {Which::kSum, Which::kMean, Which::kAmax})
    for (const char* path : {"rows", "vector", "general"})
      for (DType dtype : dtypes_of(which))
        for (const Reduction& r : kReductions) {
          if (std::string_view(path) == "rows" && !rows_claim(r)) continue;
          const std::string key = fmt::format("{}_{}_sm90", name_of(which), path);
          SCOPED_TRACE(fmt::format("{} {} {}", key, dtype_name(dtype), r.shape.str()));
          EnvGuard force("TILEOPS_FORCE", key);
          EXPECT_EQ(check_reduction(which, r, reduction_input(r.shape, dtype)), key);
        }
  // The vector path refuses a misaligned view, naming why, and writes nothing.
  EnvGuard force("TILEOPS_FORCE", "sum_vector_sm90");
  SumFwdOp op(Shape{-1});
  const Tensor x = view_at_offset(random_host({3, 1024}, DType::kBFloat16, next_seed()), 2);
  const Tensor out = poisoned_gpu({3}, DType::kBFloat16);
  const std::string error = error_of<SelectionError>([&] { op(x, {out}); });
  EXPECT_NE(error.find("TILEOPS_FORCE=sum_vector_sm90 refuses this call"), std::string::npos)
      << error;
  EXPECT_NE(error.find("aligned to 2 bytes"), std::string::npos) << error;
  for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  // The rows path refuses the misaligned view, and reductions that are not over trailing axes or
  // keep no axis, naming why; nothing is written.
  for (Which which : {Which::kSum, Which::kMean, Which::kAmax}) {
    const std::string key = fmt::format("{}_rows_sm90", name_of(which));
    EnvGuard force_rows("TILEOPS_FORCE", key);
    const Tensor aligned = reduction_input({64, 1024}, DType::kBFloat16);
    struct Refused {
      Tensor input;
      Reduction r;
      const char* why;
    };
    for (const Refused& c :
         {Refused{x, {{3, 1024}, Shape{-1}}, "aligned to 2 bytes"},
          Refused{aligned, {{64, 1024}, Shape{0}}, "not the trailing ones"},
          Refused{aligned, {{64, 1024}, std::nullopt}, "every axis is reduced"}}) {
      SCOPED_TRACE(fmt::format("{} {}", key, c.why));
      const std::string message = error_of<SelectionError>([&] {
        if (which == Which::kSum) {
          SumFwdOp rows_op(c.r.dim);
          rows_op(c.input);
        } else if (which == Which::kMean) {
          MeanFwdOp rows_op(c.r.dim);
          rows_op(c.input);
        } else {
          AmaxFwdOp rows_op(c.r.dim);
          rows_op(c.input);
        }
      });
      EXPECT_NE(message.find(fmt::format("TILEOPS_FORCE={} refuses this call", key)),
                std::string::npos)
          << message;
      EXPECT_NE(message.find(c.why), std::string::npos) << message;
    }
  }
}

TEST(CudaReduction, AxesInManyRunsAreRefused) {
  TILEOPS_REQUIRE_CUDA();
  // 18 axes alternating kept and reduced: 9 runs of each, more than the kernels decode.
  Shape shape = Shape::filled(18, 1);
  std::vector<std::int64_t> dims;
  for (std::int64_t a = 1; a < 18; a += 2) dims.push_back(a);
  SumFwdOp op{Shape(std::span<const std::int64_t>(dims))};
  const std::string error =
      error_of<Error>([&] { op(Tensor::empty(shape, DType::kFloat32, gpu())); });
  EXPECT_NE(error.find("runs of kept"), std::string::npos) << error;
}

// Offsets past 2^31 elements: softmax and row sums of [2^31 / 4096 + 64, 4096] and the amax of
// all of it, the rows repeating a block of 64 random rows; checked on the first and last rows.
TEST(CudaReduction, SizesPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  constexpr std::int64_t n = 4096, block = 64;
  constexpr std::int64_t rows = (std::int64_t{1} << 31) / n + block;
  const DType dtype = DType::kBFloat16;
  Tensor x = Tensor::empty({rows, n}, dtype, gpu());
  const Tensor pattern = random_gpu({block, n}, dtype, next_seed());
  for (std::int64_t r = 0; r < rows; r += block) {
    const std::int64_t count = std::min(block, rows - r);
    Tensor part = x.as_strided({count, n}, {n, 1}, r * n * 2);
    part.copy_from(pattern.as_strided({count, n}, {n, 1}, 0));
  }
  const references::Inputs pattern_in = host_inputs({pattern});
  // Rows [first, first + block) of `got` (rows of `width`) against the pattern's reference.
  auto check_rows = [&](const Op& op, const Tensor& got, std::int64_t width) {
    const references::Expected want =
        references::find_reference(op.name())(op.params(), pattern_in).at(0);
    for (std::int64_t first : {std::int64_t{0}, rows - block}) {
      SCOPED_TRACE(fmt::format("{} rows from {}", op.name(), first));
      const references::HostTensor h =
          host_values(got.as_strided({block, width}, {width, 1}, first * width * 2));
      // Row r holds pattern row r % block.
      references::Expected shifted = want;
      for (std::int64_t r = 0; r < block; ++r)
        for (std::int64_t i = 0; i < width; ++i) {
          const std::int64_t from = ((first + r) % block) * width + i;
          shifted.values[r * width + i] = want.values[from];
          shifted.scale[r * width + i] = want.scale[from];
        }
      const auto tol = references::tolerance(dtype);
      const references::Comparison c = references::compare(h.values, shifted, tol);
      EXPECT_TRUE(c.ok()) << c.str(h.values, shifted.values, tol);
    }
  };
  SoftmaxFwdOp softmax;
  check_rows(softmax, softmax(x), n);
  EXPECT_EQ(only_key(softmax, "softmax"), "softmax_registers_sm90");
  SumFwdOp sum(Shape{-1});
  check_rows(sum, sum(x), 1);
  AmaxFwdOp amax;
  AmaxFwdOp pattern_amax;
  EXPECT_EQ(host_values(amax(x)).values, host_values(pattern_amax(pattern)).values);
}

// ---- graph capture ---------------------------------------------------------------------------

TEST(CudaReduction, CallsCapturedInAGraphReplayOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    StreamGuard guard(Stream(gpu(), stream));
    const DType dtype = DType::kBFloat16;
    SoftmaxFwdOp softmax;
    LogSoftmaxFwdOp log_softmax;
    SumFwdOp sum;  // every axis: a split with scratch from the stream-ordered allocator
    MeanFwdOp mean(Shape{1}, false);
    AmaxFwdOp amax(Shape{1}, true);
    Tensor x = random_gpu({4, 128256}, dtype, next_seed());
    Tensor y = poisoned_gpu({4, 128256}, dtype);
    Tensor log_y = poisoned_gpu({4, 128256}, dtype);
    Tensor total = poisoned_gpu({}, dtype);
    Tensor means = poisoned_gpu({4}, dtype);
    Tensor maxima = poisoned_gpu({4, 1}, dtype);
    const auto calls = [&] {
      softmax(x, {y});
      log_softmax(x, {log_y});
      sum(x, {total});
      mean(x, {means});
      amax(x, {maxima});
    };
    CapturedCalls graph(stream, calls);

    x.copy_from(random_host({4, 128256}, dtype, next_seed()));
    for (Tensor* out : {&y, &log_y, &total, &means, &maxima})
      out->copy_from(poisoned_gpu(out->shape(), dtype));
    const references::Inputs before = host_inputs({x});
    graph.replay();
    expect_matches_reference(softmax, before, {x}, {y});
    expect_matches_reference(log_softmax, before, {x}, {log_y});
    expect_matches_reference(sum, before, {x}, {total});
    expect_matches_reference(mean, before, {x}, {means});
    expect_matches_reference(amax, before, {x}, {maxima});
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tileops::test_cuda
