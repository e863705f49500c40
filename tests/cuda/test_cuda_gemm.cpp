// GemmFwdOp and BmmFwdOp on the GPU through cuBLASLt (kernels/gemm/cuda/, docs/gemm.md): a float64
// oracle written here over the inputs as rounded to their dtype, fresh random inputs and poisoned
// outputs, both layouts of each operand, bias, the edge shapes, long K, the batch patterns, tuning
// and graph capture. Each element's tolerance scales with sum_k |a||b| (float32 accumulation).
#include <gmock/gmock.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "kernels/gemm/cuda/decode_gemm_launch.hpp"
#include "kernels/gemm/cuda/gemm_cutlass_launch.hpp"
#include "test_stream.hpp"
#include "tileops/op/tuning.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 0x5eed;
  return ++seed;
}

// One ulp of T relative to what is rounded, the library's tolerance for rounded results (Note
// [Tolerances] in references/references.hpp). cuBLASLt's bias epilogue adds the bias to the
// product already rounded to T and rounds again (seen on the H200: bf16 results 1 ulp of the
// product off with a bias, within half an ulp without), as torch.addmm's does, so a result that
// cancels against its bias keeps the product's rounding error.
double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return std::ldexp(1.0, -10);
    case DType::kBFloat16:
      return std::ldexp(1.0, -7);
    default:
      return std::ldexp(1.0, -23);
  }
}

// A [rows, cols] operand (or [batch, rows, cols]) in the layout asked for: column-major is the
// transposed view of a contiguous [cols, rows] tensor, as W.t() of a Linear weight.
Tensor operand(std::int64_t batch, std::int64_t rows, std::int64_t cols, bool column_major,
               DType dtype) {
  if (!column_major)
    return batch == 0 ? random_gpu({rows, cols}, dtype, next_seed())
                      : random_gpu({batch, rows, cols}, dtype, next_seed());
  if (batch == 0)
    return random_gpu({cols, rows}, dtype, next_seed())
        .as_strided(Shape{rows, cols}, Shape{1, rows}, 0);
  return random_gpu({batch, cols, rows}, dtype, next_seed())
      .as_strided(Shape{batch, rows, cols}, Shape{rows * cols, 1, rows}, 0);
}

// Checks out [M, N] (matrix `l` of a batch) = a [M, K] @ b [K, N] (+ bias) in float64, at rows
// `rows` and columns `cols` (all of them when empty).
struct Matrices {
  std::vector<double> a, b, bias, out;
  std::int64_t m = 0, k = 0, n = 0;
};

void expect_product(const Matrices& x, DType dtype, std::vector<std::int64_t> rows = {},
                    std::vector<std::int64_t> cols = {}) {
  const bool all = rows.empty() && cols.empty();
  auto check = [&](std::int64_t i, std::int64_t j) {
    const double bias = x.bias.empty() ? 0.0 : x.bias[static_cast<std::size_t>(j)];
    double product = 0, magnitude = std::abs(bias);
    for (std::int64_t p = 0; p < x.k; ++p) {
      const double t =
          x.a[static_cast<std::size_t>(i * x.k + p)] * x.b[static_cast<std::size_t>(p * x.n + j)];
      product += t;
      magnitude += std::abs(t);
    }
    const double ref = product + bias;
    const double got = x.out[static_cast<std::size_t>(i * x.n + j)];
    // Rounding the result, and with a bias the product before it (the epilogue's two roundings),
    // plus the float32 accumulation over K.
    const double rounded = x.bias.empty() ? std::abs(ref) : std::abs(ref) + std::abs(product);
    const double tol = unit_roundoff(dtype) * rounded + std::ldexp(1.0, -16) * magnitude + 1e-30;
    ASSERT_LE(std::abs(got - ref), tol)
        << "out[" << i << ", " << j << "] = " << got << ", expected " << ref << " (M " << x.m
        << ", K " << x.k << ", N " << x.n << ", " << dtype_name(dtype) << ")";
  };
  if (all) {
    for (std::int64_t i = 0; i < x.m; ++i)
      for (std::int64_t j = 0; j < x.n; ++j) check(i, j);
    return;
  }
  for (std::int64_t i : rows)
    for (std::int64_t j = 0; j < x.n; ++j) check(i, j);
  for (std::int64_t j : cols)
    for (std::int64_t i = 0; i < x.m; ++i) check(i, j);
}

std::vector<double> values(const Tensor& t) { return host_values(t).values; }

// One GemmFwdOp call on fresh inputs into a poisoned output, checked.
void check_gemm(GemmFwdOp& op, DType dtype, std::int64_t m, std::int64_t k, std::int64_t n,
                bool a_column_major, bool b_column_major, bool with_bias,
                bool sample_rows_and_columns = false) {
  const Tensor a = operand(0, m, k, a_column_major, dtype);
  const Tensor b = operand(0, k, n, b_column_major, dtype);
  std::optional<Tensor> bias;
  if (with_bias) bias = random_gpu({n}, dtype, next_seed());
  Tensor out = poisoned_gpu({m, n}, dtype);
  op(a, b, bias, CallOptions{out});
  Matrices x{values(a), values(b), bias ? values(*bias) : std::vector<double>{}, values(out), m,
             k,         n};
  SCOPED_TRACE(::testing::Message()
               << "a " << (a_column_major ? "column" : "row") << "-major, b "
               << (b_column_major ? "column" : "row") << "-major, bias " << with_bias);
  if (!sample_rows_and_columns || m == 0 || n == 0) return expect_product(x, dtype);
  std::mt19937_64 rng(next_seed());
  std::vector<std::int64_t> rows, cols;
  for (int i = 0; i < 4; ++i) {
    rows.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(m)));
    cols.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)));
  }
  expect_product(x, dtype, rows, cols);
}

TEST(CudaGemm, BothLayoutsOfEachOperandWithAndWithoutBias) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (bool a_col : {false, true})
      for (bool b_col : {false, true})
        for (bool bias : {false, true}) {
          GemmFwdOp op;
          // N and K are no multiple of 8: rows 2-byte aligned in bfloat16 and float16.
          check_gemm(op, dtype, 37, 75, 53, a_col, b_col, bias);
          check_gemm(op, dtype, 256, 128, 192, a_col, b_col, bias);
          for (const BuiltEntry& entry : op.built_entries("gemm"))
            EXPECT_EQ(entry.key, "gemm_cublaslt_sm90");
        }
}

TEST(CudaGemm, EdgeShapes) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    GemmFwdOp op;
    for (std::int64_t m : {0, 1, 3, 17, 1000}) check_gemm(op, dtype, m, 64, 40, false, true, true);
    check_gemm(op, dtype, 5, 64, 0, false, false, true);   // N = 0: nothing to write
    check_gemm(op, dtype, 5, 0, 24, false, false, true);   // K = 0: the bias
    check_gemm(op, dtype, 5, 0, 24, false, false, false);  // K = 0: zeros
    check_gemm(op, dtype, 1, 7, 1, true, true, false);
  }
}

TEST(CudaGemm, LongKChecksWholeRowsAndColumns) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    GemmFwdOp op;
    check_gemm(op, dtype, 96, 16384, 160, false, true, true, true);
    check_gemm(op, dtype, 7, 16383, 33, true, false, false, true);
  }
}

// The index of the matrix of an operand with batch axes `axes` that broadcasts to matrix `l` of
// the batch `batch` (axes aligned at the right, an axis of 1 broadcast).
std::int64_t broadcast_matrix(std::int64_t l, const Shape& batch, const Shape& axes) {
  std::int64_t index = 0, stride = 1;
  for (std::size_t i = batch.size(); i-- > 0;) {
    const std::int64_t coordinate = l % batch[i];
    l /= batch[i];
    const std::size_t from_right = batch.size() - 1 - i;
    if (from_right >= axes.size()) continue;
    const std::int64_t extent = axes[axes.size() - 1 - from_right];
    if (extent != 1) index += coordinate * stride;
    stride *= extent;
  }
  return index;
}

Shape leading(const Shape& shape) {
  Shape out;
  for (std::size_t i = 0; i + 2 < shape.size(); ++i) out.push_back(shape[i]);
  return out;
}

// A bmm call into a poisoned `out_shape`, checked matrix by matrix.
void check_bmm(BmmFwdOp& op, const Tensor& a, const Tensor& b, const Shape& out_shape,
               DType dtype) {
  Tensor out = poisoned_gpu(out_shape, dtype);
  op(a, b, CallOptions{out});
  const std::int64_t m = out_shape[out_shape.size() - 2], n = out_shape[out_shape.size() - 1];
  const std::int64_t k = a.shape()[a.dim() - 1];
  const Shape batch = leading(out_shape);
  const std::vector<double> av = values(a), bv = values(b), ov = values(out);
  for (std::int64_t l = 0; l < batch.numel(); ++l) {
    const std::int64_t la = broadcast_matrix(l, batch, leading(a.shape()));
    const std::int64_t lb = broadcast_matrix(l, batch, leading(b.shape()));
    Matrices x;
    x.m = m, x.k = k, x.n = n;
    x.a.assign(av.begin() + la * m * k, av.begin() + (la + 1) * m * k);
    x.b.assign(bv.begin() + lb * k * n, bv.begin() + (lb + 1) * k * n);
    x.out.assign(ov.begin() + l * m * n, ov.begin() + (l + 1) * m * n);
    SCOPED_TRACE(::testing::Message() << "matrix " << l);
    expect_product(x, dtype);
  }
}

TEST(CudaBmm, BatchPatterns) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    BmmFwdOp op;
    check_bmm(op, operand(3, 33, 40, false, dtype), operand(3, 40, 24, false, dtype), {3, 33, 24},
              dtype);
    check_bmm(op, operand(3, 33, 40, true, dtype), operand(3, 40, 24, true, dtype), {3, 33, 24},
              dtype);
    // One weight for the batch: folds into one GEMM of 4 * 33 rows.
    check_bmm(op, operand(4, 33, 40, false, dtype), operand(0, 40, 24, true, dtype), {4, 33, 24},
              dtype);
    // a broadcast over b's batch.
    check_bmm(op, operand(0, 33, 40, false, dtype), operand(5, 40, 24, false, dtype), {5, 33, 24},
              dtype);
    // [2, 1] against [1, 3]: materialised by the op.
    check_bmm(op, random_gpu({2, 1, 9, 16}, dtype, next_seed()),
              random_gpu({1, 3, 16, 10}, dtype, next_seed()), {2, 3, 9, 10}, dtype);
    // A batch of one, and an empty K.
    check_bmm(op, operand(1, 9, 16, false, dtype), operand(1, 16, 10, false, dtype), {1, 9, 10},
              dtype);
    check_bmm(op, operand(2, 9, 0, false, dtype), operand(2, 0, 10, false, dtype), {2, 9, 10},
              dtype);
  }
}

// cuBLASLt counts a strided batch in int32: a batch of 2^31 + 5 runs as pieces of at most
// kMaxLtBatch matrices (BmmCublasLtSm90::forward, lt_matmul.hpp). Every one of its [1, 1] products
// is written: a is one matrix broadcast over the batch by a stride-0 view, out is 4 GiB of poisoned
// bfloat16, read back as bits (the product 1.5 * 2 = 3 is exact).
TEST(CudaBmm, BatchPast32BitIndexingRunsInPiecesAndWritesEveryMatrix) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t batch = (std::int64_t{1} << 31) + 5;
  const auto bf16 = [](double v) {
    Tensor t = Tensor::empty(Shape{1, 1, 1}, DType::kBFloat16);
    *t.data<std::uint16_t>() = double_to_bfloat16_bits(v);
    return t.to(gpu(), DType::kBFloat16);
  };
  const Tensor a = bf16(1.5).as_strided(Shape{batch, 1, 1}, Shape{0, 1, 1}, 0);
  const Tensor b = bf16(2.0);
  Tensor out = poisoned_gpu(Shape{batch, 1, 1}, DType::kBFloat16);
  BmmFwdOp op;
  op(a, b, CallOptions{out});
  const Tensor host = out.to(Device::cpu(), DType::kBFloat16);
  const auto* bits = host.data<const std::uint16_t>();
  const std::uint16_t three = double_to_bfloat16_bits(3.0);
  std::int64_t wrong = 0, first_wrong = -1;
  for (std::int64_t l = 0; l < batch; ++l) {
    if (bits[l] == three) continue;
    if (wrong++ == 0) first_wrong = l;
  }
  EXPECT_EQ(wrong, 0) << "first wrong matrix: " << first_wrong;
}

std::string detail_of(const Op& op, std::string_view interface) {
  const std::vector<BuiltEntry> built = op.built_entries(interface);
  if (built.size() != 1) return "";
  const auto* kernel = dynamic_cast<const Kernel*>(built[0].entry.get());
  return kernel ? kernel->detail() : "";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CudaGemm, TuningTimesTheCandidatesRecordsTheChoiceAndAFreshEntryStartsTuned) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kBFloat16;
  GemmFwdOp op;
  check_gemm(op, dtype, 128, 512, 384, false, true, true);
  EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("(heuristic)"));
  op.request_tune();
  check_gemm(op, dtype, 128, 512, 384, false, true, true);
  EXPECT_THAT(detail_of(op, "gemm"), ::testing::MatchesRegex("cublaslt algo .* \\(tuned .* us\\)"));

  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string saved = dir + "/gemm_tuning." + std::to_string(::getpid());
  tuning_store().save(saved);
  TuningStore fresh;
  fresh.load(saved);
  fresh.save(saved + ".again");
  EXPECT_EQ(file_text(saved), file_text(saved + ".again"));
  EXPECT_NE(file_text(saved).find("gemm_cublaslt_sm90\t"), std::string::npos);
  std::remove(saved.c_str());
  std::remove((saved + ".again").c_str());

  GemmFwdOp later;  // a new instance builds a new entry, which reads the store
  check_gemm(later, dtype, 100, 512, 384, false, true, true);
  EXPECT_THAT(detail_of(later, "gemm"), ::testing::HasSubstr("tuned, from the tuning store"));
}

// Tuning copies the operands to time the candidates as a model runs them (Note [Tuning as
// served]): the copies span padded leading dimensions and a transposed view exactly, the call's
// operands are left as they were, and its output is the chosen algorithm's.
TEST(CudaGemm, TuningOnPaddedViewsLeavesTheOperandsAndWritesTheProduct) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kBFloat16;
  const std::int64_t m = 72, k = 136, n = 200;
  const Tensor a = random_gpu({m, k + 24}, dtype, next_seed())
                       .as_strided(Shape{m, k}, Shape{k + 24, 1}, 0);  // ld = k + 24
  const Tensor b = random_gpu({n, k + 8}, dtype, next_seed())
                       .as_strided(Shape{k, n}, Shape{1, k + 8}, 0);  // column-major, ld = k + 8
  const std::vector<double> a_before = values(a), b_before = values(b);
  Tensor out = poisoned_gpu({m, n}, dtype);
  GemmFwdOp op;
  op.request_tune();
  op(a, b, std::nullopt, CallOptions{out});
  EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("(tuned"));
  EXPECT_EQ(values(a), a_before);
  EXPECT_EQ(values(b), b_before);
  expect_product(Matrices{a_before, b_before, {}, values(out), m, k, n}, dtype);
}

// Saves the tuning store to `saved` with every recorded choice rewritten to `choice`, and loads
// that instead: which candidate wins tuning depends on the device, so a test that needs one pins
// it.
void pin_every_choice(const std::string& saved, const std::string& choice) {
  tuning_store().save(saved);
  std::istringstream lines(file_text(saved));
  std::ofstream rewritten(saved);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t tab = line.rfind('\t');
    rewritten << (tab == std::string::npos ? line : line.substr(0, tab + 1) + choice) << "\n";
  }
  rewritten.close();
  tuning_store().clear();
  tuning_store().load(saved);
}

// Which candidate wins tuning depends on the device, so the classic cuBLAS candidate (Note [The
// classic cuBLAS candidate]) is pinned through the store: every choice is rewritten to it, and
// fresh entries must serve calls with it, a batch with a broadcast operand and a call with bias
// (the bias written to out first, then added with beta = 1) included.
TEST(CudaGemm, AStoredClassicCuBlasChoiceServesEveryCall) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kBFloat16;
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string saved = dir + "/gemm_classic." + std::to_string(::getpid());
  tuning_store().save(saved + ".before");
  {
    GemmFwdOp plain, with_bias;
    BmmFwdOp batched;
    plain.request_tune();
    with_bias.request_tune();
    batched.request_tune();
    check_gemm(plain, dtype, 1, 256, 384, false, true, false);
    check_gemm(with_bias, dtype, 1, 256, 384, false, true, true);
    check_bmm(batched, operand(4, 33, 40, false, dtype), operand(0, 40, 24, true, dtype),
              {4, 33, 24}, dtype);
  }
  pin_every_choice(saved, "cublas gemmex 1.00");

  GemmFwdOp plain, with_bias;
  BmmFwdOp batched;
  check_gemm(plain, dtype, 1, 256, 384, false, true, false);
  EXPECT_EQ(detail_of(plain, "gemm"), "cublas gemmex (tuned, from the tuning store)");
  check_bmm(batched, operand(4, 33, 40, false, dtype), operand(0, 40, 24, true, dtype), {4, 33, 24},
            dtype);
  EXPECT_EQ(detail_of(batched, "bmm"), "cublas gemmex (tuned, from the tuning store)");
  check_gemm(with_bias, dtype, 1, 256, 384, false, true, true);
  EXPECT_EQ(detail_of(with_bias, "gemm"), "cublas gemmex (tuned, from the tuning store)");

  tuning_store().clear();
  tuning_store().load(saved + ".before");
  std::remove(saved.c_str());
  std::remove((saved + ".before").c_str());
}

// The CUTLASS candidate (Note [CUTLASS GEMM candidate] in kernels/gemm/cuda/gemm_cutlass.cuh),
// pinned through the store as above, serves both layouts of b in bfloat16 at M of one row, a
// partial tile and several tiles, with K not a multiple of the 64-deep step; call specs it does
// not take (float16, which it is not built for; a bias; K = 100, whose rows are not 16-byte
// multiples) fall back to cuBLASLt's heuristic with the same choice stored.
TEST(CudaGemm, AStoredCutlassChoiceServesTheCallsItTakesAndOnlyThose) {
  TILEOPS_REQUIRE_CUDA();
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string saved = dir + "/gemm_cutlass." + std::to_string(::getpid());
  tuning_store().save(saved + ".before");
  struct Case {
    DType dtype;
    bool b_column_major, with_bias;
    std::int64_t k;
    bool cutlass;
  };
  const std::vector<Case> cases = {
      {DType::kBFloat16, true, false, 200, true}, {DType::kBFloat16, false, false, 200, true},
      {DType::kFloat16, true, false, 200, false}, {DType::kFloat16, false, false, 200, false},
      {DType::kBFloat16, true, true, 200, false}, {DType::kBFloat16, true, false, 100, false},
  };
  const std::vector<std::int64_t> rows = {1, 129, 300};
  for (const Case& c : cases)      // each call spec (M's size class among them) tuned, so that the
    for (std::int64_t m : rows) {  // store has its line
      GemmFwdOp op;
      op.request_tune();
      check_gemm(op, c.dtype, m, c.k, 264, false, c.b_column_major, c.with_bias);
    }
  pin_every_choice(saved, std::string(kernels::cuda::kCutlassGemmName) + " 1.00");

  for (const Case& c : cases) {
    for (std::int64_t m : rows) {
      GemmFwdOp op;  // one entry, whose detail is the call's
      check_gemm(op, c.dtype, m, c.k, 264, false, c.b_column_major, c.with_bias);
      if (c.cutlass)
        EXPECT_EQ(detail_of(op, "gemm"),
                  std::string(kernels::cuda::kCutlassGemmName) + " (tuned, from the tuning store)");
      else
        EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("(heuristic)"));
    }
  }

  tuning_store().clear();
  tuning_store().load(saved + ".before");
  std::remove(saved.c_str());
  std::remove((saved + ".before").c_str());
}

// The decode kernel's shapes (Note [Decode GEMM] in kernels/gemm/cuda/decode_gemm.cuh) and the
// streamed decode kernel (Note [Streamed decode GEMM] in kernels/gemm/cuda/decode_stream.cuh),
// each pinned through the store as above, serve both dtypes with and without bias at every row
// count of their classes (the decode shapes 1, 5 and 16 rows: a's rows 8-15 present or not; the
// streamed kernel one), with N not a multiple of the wide shape's 16 columns, fewer than the
// multiprocessors (one column a block) and odd, and K past the last whole step (200), past the last
// group of steps loaded together (2056) or cut into slices of a stage (8200, streamed); for the
// streamed kernel also K = 4096, a stage's whole column (a's row held in registers up to it), and
// 4104, just past it (a's row in shared memory, each column two slices); call
// specs they do not take (a row-major b, K = 100, whose rows are not 16-byte multiples, M = 17,
// and for the streamed kernel M > 1 and a row of a too long for its shared memory) fall back to
// cuBLASLt's heuristic with the same choice stored.
TEST(CudaGemm, AStoredDecodeChoiceServesTheCallsItTakesAndOnlyThose) {
  TILEOPS_REQUIRE_CUDA();
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string saved = dir + "/gemm_decode." + std::to_string(::getpid());
  tuning_store().save(saved + ".before");
  struct Case {
    DType dtype;
    bool b_column_major, with_bias;
    std::int64_t m, k, n;
    bool decode;
    bool streamed;
  };
  std::vector<Case> cases;
  for (DType dtype : {DType::kBFloat16, DType::kFloat16})
    for (bool with_bias : {false, true})
      for (std::int64_t m : {1, 5, 16})
        for (std::int64_t k : {200, 2056, 8200})
          cases.push_back({dtype, true, with_bias, m, k, 264, true, m == 1});
  cases.push_back({DType::kBFloat16, true, false, 1, 4096, 264, true, true});
  cases.push_back({DType::kFloat16, true, true, 1, 4096, 264, true, true});
  cases.push_back({DType::kFloat16, true, false, 1, 4104, 264, true, true});
  // a's slice held in registers: 2 and 4 slices a column (the last one short) divide the groups.
  cases.push_back({DType::kBFloat16, true, false, 1, 8192, 264, true, true});
  cases.push_back({DType::kFloat16, true, true, 1, 14336, 264, true, true});
  cases.push_back({DType::kBFloat16, true, true, 1, 12288, 264, true, true});  // 3 slices: shared
  cases.push_back({DType::kBFloat16, true, false, 1, 2056, 100, true, true});
  cases.push_back({DType::kBFloat16, true, true, 1, 2056, 4100, true, true});
  cases.push_back({DType::kBFloat16, true, false, 1, 60000, 264, true, false});
  cases.push_back({DType::kBFloat16, false, false, 1, 200, 264, false, false});
  cases.push_back({DType::kBFloat16, true, false, 1, 100, 264, false, false});
  cases.push_back({DType::kBFloat16, true, false, 17, 200, 264, false, false});
  for (const Case& c : cases) {  // each call spec tuned, so that the store has its line
    GemmFwdOp op;
    op.request_tune();
    check_gemm(op, c.dtype, c.m, c.k, c.n, false, c.b_column_major, c.with_bias);
  }
  tuning_store().save(saved + ".tuned");

  std::vector<std::pair<std::string, bool>> candidates;  // name, streamed
  for (kernels::cuda::DecodeGemmShape shape : kernels::cuda::kDecodeGemmShapes)
    candidates.emplace_back(kernels::cuda::decode_gemm_name(shape), false);
  candidates.emplace_back(kernels::cuda::kStreamedDecodeGemmName, true);
  for (const auto& [name, streamed] : candidates) {
    SCOPED_TRACE(name);
    tuning_store().clear();
    tuning_store().load(saved + ".tuned");
    pin_every_choice(saved, name + " 1.00");
    for (const Case& c : cases) {
      GemmFwdOp op;  // one entry, whose detail is the call's
      check_gemm(op, c.dtype, c.m, c.k, c.n, false, c.b_column_major, c.with_bias);
      if (streamed ? c.streamed : c.decode)
        EXPECT_EQ(detail_of(op, "gemm"), name + " (tuned, from the tuning store)")
            << "M " << c.m << ", K " << c.k << ", N " << c.n;
      else
        EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("(heuristic)"))
            << "M " << c.m << ", K " << c.k << ", N " << c.n;
    }
  }

  tuning_store().clear();
  tuning_store().load(saved + ".before");
  for (const char* suffix : {"", ".before", ".tuned"}) std::remove((saved + suffix).c_str());
}

// Tuning times each candidate as a replayed graph (Note [Tuning as served] in
// kernels/gemm/cuda/lt_matmul.cpp) on a stream of its own, forked from the call's stream and
// joined back, so that the call's stream may be one that cannot capture: torch's legacy default
// stream. The product is then the chosen candidate's, checked against float64.
TEST(CudaGemm, TuningReplaysGraphsEvenWhenCalledOnTheLegacyStream) {
  TILEOPS_REQUIRE_CUDA();
  EnvGuard log("TILEOPS_LOG", "tune");
  const StreamGuard legacy(Stream(gpu(), cudaStreamLegacy));
  GemmFwdOp op;
  op.request_tune();
  ::testing::internal::CaptureStderr();
  check_gemm(op, DType::kBFloat16, 3, 264, 200, false, true, false);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  std::istringstream lines(printed);
  int candidates = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("tileops: tune ", 0) == 0) {
      ++candidates;
      EXPECT_THAT(line, ::testing::HasSubstr(", a graph)")) << line;
    }
  EXPECT_GT(candidates, 1) << printed;
}

TEST(CudaGemm, ATunedCallIsCapturedAndReplaysOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  const TestStream s;
  const DType dtype = DType::kFloat16;
  GemmFwdOp op;
  Tensor a = operand(0, 64, 200, false, dtype);
  const Tensor b = operand(0, 200, 96, true, dtype);
  const Tensor bias = random_gpu({96}, dtype, next_seed());
  Tensor out = poisoned_gpu({64, 96}, dtype);
  op(a, b, bias, CallOptions{out});  // warm-up: the entry is built outside the capture
  op.request_tune();
  // The next call is captured: it cannot tune, so it runs the heuristic's choice.
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  op(a, b, bias, CallOptions{out});
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &graph), cudaSuccess);
  cudaGraphDestroy(graph);
  EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("(heuristic)"));
  op(a, b, bias, CallOptions{out});  // uncaptured: tunes
  EXPECT_THAT(detail_of(op, "gemm"), ::testing::HasSubstr("tuned"));

  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  op(a, b, bias, CallOptions{out});
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  a.copy_from(random_host({64, 200}, dtype, next_seed()));
  out.copy_from(poisoned_gpu({64, 96}, dtype));
  ASSERT_EQ(cudaGraphLaunch(exec, s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  expect_product({values(a), values(b), values(bias), values(out), 64, 200, 96}, dtype);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace tileops::test_cuda
