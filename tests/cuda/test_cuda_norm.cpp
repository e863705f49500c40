// The norm family on the GPU against the float64 references: every dtype, row lengths that reach
// each path (and lengths that are no multiple of a vector), one row, empty tensors, 3-D inputs,
// non-contiguous and misaligned views, outputs poisoned before each run; every implementation
// forced on the shapes it claims, and refusing one it does not.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cuda_testing.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops::test_cuda {
namespace {

// Row lengths: 1, 7 (no vector), 128 and 1024 (warp), 4097 (odd), 8192 (block), 12289 (odd),
// 40000 (streaming for 16-bit types: more than a block's 4096 vectors), 128256 (Llama-3's
// vocabulary; streaming).
const std::int64_t kRowLengths[] = {1, 7, 128, 1024, 4097, 8192, 12289, 40000, 128256};

std::int64_t rows_for(std::int64_t n) { return n >= 40000 ? 3 : n >= 4097 ? 9 : 33; }

std::uint64_t next_seed() {
  static std::uint64_t seed = 1000;
  return seed++;
}

TEST(CudaNorm, RMSNormEveryDtypeAndRowLength) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (std::int64_t n : kRowLengths)
      for (bool weighted : {true, false}) {
        SCOPED_TRACE(fmt::format("{} n={} weight={}", dtype_name(dtype), n, weighted));
        RMSNormFwdOp op(Shape{n}, 1e-5);
        const Tensor x = random_gpu({rows_for(n), n}, dtype, next_seed(), 3.0);
        std::optional<Tensor> w;
        if (weighted) w = random_gpu({n}, dtype, next_seed());
        const Tensor out = poisoned_gpu({rows_for(n), n}, dtype);
        run_and_check(op, {x, w}, CallOptions{out});
      }
}

TEST(CudaNorm, LayerNormEveryDtypeAndRowLength) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (std::int64_t n : kRowLengths)
      for (int affine = 0; affine < 3; ++affine) {  // none, weight, weight and bias
        SCOPED_TRACE(fmt::format("{} n={} affine={}", dtype_name(dtype), n, affine));
        LayerNormFwdOp op(Shape{n}, 1e-5);
        // A mean far from zero: the centered variance must not cancel.
        const Tensor x = random_gpu({rows_for(n), n}, dtype, next_seed(), 2.0);
        std::optional<Tensor> w, b;
        if (affine >= 1) w = random_gpu({n}, dtype, next_seed());
        if (affine >= 2) b = random_gpu({n}, dtype, next_seed());
        const Tensor out = poisoned_gpu({rows_for(n), n}, dtype);
        run_and_check(op, {x, w, b}, CallOptions{out});
      }
}

TEST(CudaNorm, FusedAddRMSNormUpdatesTheResidualInPlace) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (std::int64_t n : kRowLengths) {
      SCOPED_TRACE(fmt::format("{} n={}", dtype_name(dtype), n));
      FusedAddRMSNormFwdOp op(1e-6);
      const Tensor x = random_gpu({rows_for(n), n}, dtype, next_seed());
      const Tensor residual = random_gpu({rows_for(n), n}, dtype, next_seed());
      const Tensor w = random_gpu({n}, dtype, next_seed());
      const Tensor out = poisoned_gpu({rows_for(n), n}, dtype);
      run_and_check(op, {x, residual, w}, CallOptions{out});
    }
}

TEST(CudaNorm, OneRowThreeDimensionsAndDefaultEps) {
  TILEOPS_REQUIRE_CUDA();
  RMSNormFwdOp one(Shape{4096});
  run_and_check(one, {random_gpu({1, 4096}, DType::kBFloat16, next_seed()),
                      random_gpu({4096}, DType::kBFloat16, next_seed())});
  // Qwen3's per-head norm: [tokens, heads, 128], the narrow-warp path.
  RMSNormFwdOp heads(Shape{128}, 1e-6);
  run_and_check(heads, {random_gpu({5, 32, 128}, DType::kBFloat16, next_seed()),
                        random_gpu({128}, DType::kBFloat16, next_seed())});
  // A normalized shape of two axes: rows of 4 * 256.
  LayerNormFwdOp two_axes(Shape{4, 256});
  run_and_check(two_axes, {random_gpu({2, 3, 4, 256}, DType::kFloat16, next_seed()),
                           random_gpu({4, 256}, DType::kFloat16, next_seed()),
                           random_gpu({4, 256}, DType::kFloat16, next_seed())});
  FusedAddRMSNormFwdOp fused;
  run_and_check(fused, {random_gpu({2, 3, 1024}, DType::kFloat32, next_seed()),
                        random_gpu({2, 3, 1024}, DType::kFloat32, next_seed()),
                        random_gpu({1024}, DType::kFloat32, next_seed())});
}

TEST(CudaNorm, EmptyTensorsLaunchNothing) {
  TILEOPS_REQUIRE_CUDA();
  RMSNormFwdOp op(Shape{64});
  const Tensor y = op(Tensor::empty({0, 64}, DType::kBFloat16, gpu()));
  EXPECT_EQ(y.shape(), (Shape{0, 64}));
  EXPECT_EQ(y.device(), gpu());
  EXPECT_TRUE(op.built_entries("rms_norm").empty());
  LayerNormFwdOp zero_width(Shape{0});
  EXPECT_EQ(zero_width(Tensor::empty({5, 0}, DType::kFloat32, gpu())).shape(), (Shape{5, 0}));
  FusedAddRMSNormFwdOp fused;
  const Tensor e = Tensor::empty({0, 16}, DType::kFloat16, gpu());
  EXPECT_EQ(fused(e, Tensor::empty({0, 16}, DType::kFloat16, gpu()),
                  random_gpu({16}, DType::kFloat16, next_seed()))
                .shape(),
            (Shape{0, 16}));
}

TEST(CudaNorm, NonContiguousInputsAreCopiedFirst) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // x is the transpose of a [n, rows] tensor: a strided view on the device.
    const Tensor base = random_gpu({1024, 6}, dtype, next_seed());
    const Tensor x = base.as_strided({6, 1024}, {1, 6}, 0);
    ASSERT_FALSE(x.is_contiguous());
    RMSNormFwdOp op(Shape{1024});
    run_and_check(op, {x, random_gpu({1024}, dtype, next_seed())});
    // The fused op writes its residual in place, through a contiguous copy for a strided one.
    FusedAddRMSNormFwdOp fused;
    const Tensor rbase = random_gpu({1024, 6}, dtype, next_seed());
    run_and_check(
        fused, {random_gpu({6, 1024}, dtype, next_seed()), rbase.as_strided({6, 1024}, {1, 6}, 0),
                random_gpu({1024}, dtype, next_seed())});
  }
}

TEST(CudaNorm, MisalignedViewsTakeTheGeneralPath) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // One element past a 16-byte boundary: 2 bytes for 16-bit types, 4 for float32.
    const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
    const Tensor x = view_at_offset(random_host({7, 2048}, dtype, next_seed()), offset);
    const Tensor w = view_at_offset(random_host({2048}, dtype, next_seed()), offset);
    RMSNormFwdOp op(Shape{2048});
    run_and_check(op, {x, w});
    EXPECT_EQ(only_key(op, "rms_norm"), "rms_norm_general_sm90");
    LayerNormFwdOp ln(Shape{2048});
    run_and_check(ln, {x, w, std::nullopt});
    EXPECT_EQ(only_key(ln, "layer_norm"), "layer_norm_general_sm90");
    // A misaligned out buffer counts too.
    RMSNormFwdOp into(Shape{2048});
    run_and_check(into, {random_gpu({7, 2048}, dtype, next_seed()), std::nullopt},
                  CallOptions{view_at_offset(random_host({7, 2048}, dtype, next_seed()), offset)});
    EXPECT_EQ(only_key(into, "rms_norm"), "rms_norm_general_sm90");
  }
}

TEST(CudaNorm, SelectionByRowLength) {
  TILEOPS_REQUIRE_CUDA();
  struct Case {
    std::int64_t n;
    DType dtype;
    const char* key;
  };
  for (const Case& c : {Case{128, DType::kBFloat16, "rms_norm_warp_sm90"},
                        Case{1024, DType::kBFloat16, "rms_norm_warp_sm90"},
                        Case{1032, DType::kBFloat16, "rms_norm_block_sm90"},
                        Case{4096, DType::kBFloat16, "rms_norm_fixed_sm90"},
                        Case{8192, DType::kBFloat16, "rms_norm_fixed_sm90"},
                        Case{16384, DType::kFloat16, "rms_norm_fixed_sm90"},
                        Case{8200, DType::kBFloat16, "rms_norm_block_sm90"},
                        Case{32768, DType::kBFloat16, "rms_norm_block_sm90"},
                        Case{32776, DType::kBFloat16, "rms_norm_streaming_sm90"},
                        Case{16384, DType::kFloat32, "rms_norm_block_sm90"},
                        Case{4096, DType::kFloat32, "rms_norm_block_sm90"},
                        Case{16388, DType::kFloat32, "rms_norm_streaming_sm90"},
                        Case{4097, DType::kBFloat16, "rms_norm_general_sm90"}}) {
    SCOPED_TRACE(fmt::format("n={} {}", c.n, dtype_name(c.dtype)));
    RMSNormFwdOp op(Shape{c.n});
    op(random_gpu({2, c.n}, c.dtype, next_seed()));
    EXPECT_EQ(only_key(op, "rms_norm"), c.key);
  }
  // LayerNorm and FusedAddRMSNorm stage rows of 8 to 32 KB in shared memory, but LayerNorm's
  // float32 rows only from 16 KB (norm_shared_row_bytes_above), and LayerNorm's 16-bit rows of
  // 4096, 8192 and 16384 take the fixed path.
  struct TwoOps {
    std::int64_t n;
    DType dtype;
    const char* layer;
    const char* fused;
  };
  for (const TwoOps& c : {TwoOps{1024, DType::kBFloat16, "warp", "warp"},
                          TwoOps{1032, DType::kBFloat16, "block", "block"},
                          TwoOps{4096, DType::kBFloat16, "fixed", "block"},
                          TwoOps{4088, DType::kBFloat16, "block", "block"},
                          TwoOps{4104, DType::kBFloat16, "shared", "shared"},
                          TwoOps{8192, DType::kFloat16, "fixed", "shared"},
                          TwoOps{16384, DType::kBFloat16, "fixed", "shared"},
                          TwoOps{16376, DType::kBFloat16, "shared", "shared"},
                          TwoOps{16392, DType::kBFloat16, "block", "block"},
                          TwoOps{2048, DType::kFloat32, "block", "block"},
                          TwoOps{2052, DType::kFloat32, "block", "shared"},
                          TwoOps{4096, DType::kFloat32, "block", "shared"},
                          TwoOps{4100, DType::kFloat32, "shared", "shared"},
                          TwoOps{8192, DType::kFloat32, "shared", "shared"},
                          TwoOps{8196, DType::kFloat32, "block", "block"}}) {
    SCOPED_TRACE(fmt::format("n={} {}", c.n, dtype_name(c.dtype)));
    LayerNormFwdOp layer(Shape{c.n});
    layer(random_gpu({2, c.n}, c.dtype, next_seed()));
    EXPECT_EQ(only_key(layer, "layer_norm"), fmt::format("layer_norm_{}_sm90", c.layer));
    FusedAddRMSNormFwdOp fused;
    fused(random_gpu({2, c.n}, c.dtype, next_seed()), random_gpu({2, c.n}, c.dtype, next_seed()),
          random_gpu({c.n}, c.dtype, next_seed()));
    EXPECT_EQ(only_key(fused, "fused_add_rms_norm"),
              fmt::format("fused_add_rms_norm_{}_sm90", c.fused));
  }
}

// The shared path stages rows of 8 (LayerNorm's float32: 16) to 32 KB; forced on others it
// refuses, naming the sizes.
TEST(CudaNorm, TheSharedPathRefusesRowsOutsideItsStage) {
  TILEOPS_REQUIRE_CUDA();
  EnvGuard force("TILEOPS_FORCE", "layer_norm_shared_sm90");
  struct Case {
    std::int64_t n;
    DType dtype;
    const char* reason;
  };
  for (const Case& c :
       {Case{16392, DType::kBFloat16,
             "rows of 16392 elements are 32784 bytes; this path stages rows of up to 32768"},
        Case{4096, DType::kBFloat16,
             "rows of 4096 elements are 8192 bytes; the block path holds rows of up to 8192 "
             "bytes as fast"},
        Case{4096, DType::kFloat32,
             "rows of 4096 elements are 16384 bytes; the block path holds rows of up to 16384 "
             "bytes as fast"}}) {
    LayerNormFwdOp op(Shape{c.n});
    const Tensor out = poisoned_gpu({2, c.n}, c.dtype);
    const std::string error = error_of<SelectionError>([&] {
      op(random_gpu({2, c.n}, c.dtype, next_seed()), std::nullopt, std::nullopt, {out});
    });
    EXPECT_NE(error.find(c.reason), std::string::npos) << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  }
}

// Runs `op` with the implementation `key` of `interface` forced (selection reads TILEOPS_FORCE at
// the call) on `inputs` into a poisoned [rows, n] output; checks the output against the reference
// and that `key` served the call.
void run_forced(Op& op, const char* interface, const std::string& key,
                const std::vector<std::optional<Tensor>>& inputs, std::int64_t rows, std::int64_t n,
                DType dtype) {
  EnvGuard force("TILEOPS_FORCE", key);
  run_and_check(op, inputs, CallOptions{poisoned_gpu({rows, n}, dtype)});
  EXPECT_EQ(only_key(op, interface), key);
}

// The block and shared paths launch one kernel for calls of fewer rows than the device has
// multiprocessors (the row split over a cluster of blocks) and another for more (Note [Few rows] in
// kernels/norm/cuda/norm.cuh): both, forced, with every combination of affine tensors LayerNorm
// takes.
TEST(CudaNorm, FewAndManyRowsOnTheBlockAndSharedPaths) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t many = 2 * device_facts(gpu()).sm_count + 7;
  for (const char* path : {"shared", "block"})
    for (DType dtype : kFloatDTypes)
      for (std::int64_t n : {std::int64_t{4608}, std::int64_t{8192}})
        for (std::int64_t rows : {std::int64_t{1}, std::int64_t{3}, many}) {
          SCOPED_TRACE(fmt::format("{} {} n={} rows={}", path, dtype_name(dtype), n, rows));
          if (std::string(path) == "block") {
            RMSNormFwdOp op(Shape{n}, 1e-5);
            run_forced(op, "rms_norm", "rms_norm_block_sm90",
                       {random_gpu({rows, n}, dtype, next_seed(), 3.0),
                        random_gpu({n}, dtype, next_seed())},
                       rows, n, dtype);
          }
          for (int affine = 0; affine < 4; ++affine) {  // none, weight, bias, both
            LayerNormFwdOp op(Shape{n}, 1e-5);
            std::optional<Tensor> w, b;
            if (affine & 1) w = random_gpu({n}, dtype, next_seed());
            if (affine & 2) b = random_gpu({n}, dtype, next_seed());
            run_forced(op, "layer_norm", fmt::format("layer_norm_{}_sm90", path),
                       {random_gpu({rows, n}, dtype, next_seed(), 2.0), w, b}, rows, n, dtype);
          }
          FusedAddRMSNormFwdOp op(1e-6);
          run_forced(
              op, "fused_add_rms_norm", fmt::format("fused_add_rms_norm_{}_sm90", path),
              {random_gpu({rows, n}, dtype, next_seed()), random_gpu({rows, n}, dtype, next_seed()),
               random_gpu({n}, dtype, next_seed())},
              rows, n, dtype);
        }
}

// FusedAddRMSNorm's rows of 512 to 1024 vectors take the few-rows kernel up to 16 rows per
// multiprocessor (Note [FusedAddRMSNorm's prefill rows] in kernels/norm/cuda/norm_launch.cu): the
// most rows it serves and one more (the block and staged kernels), at both ends of the length range
// and just outside it (bfloat16; the other dtypes at both ends), unforced.
TEST(CudaNorm, FusedAddRMSNormOnBothSidesOfThePrefillRule) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t most = 16 * static_cast<std::int64_t>(device_facts(gpu()).sm_count);
  for (DType dtype : kFloatDTypes) {
    const std::int64_t per_vector = 16 / static_cast<std::int64_t>(dtype_size(dtype));
    const std::vector<std::int64_t> lengths = dtype == DType::kBFloat16
                                                  ? std::vector<std::int64_t>{511, 512, 1024, 1025}
                                                  : std::vector<std::int64_t>{512, 1024};
    for (std::int64_t vectors : lengths)
      for (std::int64_t rows : {most, most + 1}) {
        const std::int64_t n = vectors * per_vector;
        SCOPED_TRACE(fmt::format("{} n={} rows={}", dtype_name(dtype), n, rows));
        FusedAddRMSNormFwdOp op(1e-6);
        run_and_check(
            op,
            {random_gpu({rows, n}, dtype, next_seed()), random_gpu({rows, n}, dtype, next_seed()),
             random_gpu({n}, dtype, next_seed())},
            CallOptions{poisoned_gpu({rows, n}, dtype)});
      }
  }
}

// Few rows (Note [Few rows] in norm.cuh): a block-path call of fewer rows than multiprocessors
// splits each row over a cluster of 1 to 8 blocks, fewer as the rows grow, never fewer than hold
// the row at 1024 vectors a block. Lengths on both sides of each split (a block of about 128
// vectors, LayerNorm's 256 and 512), lengths that leave the last block of a cluster short or
// empty, and row counts that shrink the cluster; every op, every dtype.
TEST(CudaNorm, FewRowsAcrossClusterSizes) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t most = device_facts(gpu()).sm_count - 1;
  for (DType dtype : kFloatDTypes) {
    const std::int64_t per_vector = 16 / static_cast<std::int64_t>(dtype_size(dtype));
    for (std::int64_t vectors : {1, 33, 128, 129, 257, 512, 513, 1000, 1025, 2049, 4095, 4096})
      for (std::int64_t rows : {std::int64_t{1}, std::int64_t{3}, std::int64_t{40}, most}) {
        if (rows == most && vectors != 4095) continue;  // one length at the most rows
        const std::int64_t n = vectors * per_vector;
        SCOPED_TRACE(fmt::format("{} n={} rows={}", dtype_name(dtype), n, rows));
        RMSNormFwdOp rms(Shape{n}, 1e-5);
        run_forced(
            rms, "rms_norm", "rms_norm_block_sm90",
            {random_gpu({rows, n}, dtype, next_seed(), 3.0), random_gpu({n}, dtype, next_seed())},
            rows, n, dtype);
        LayerNormFwdOp layer(Shape{n}, 1e-5);
        run_forced(layer, "layer_norm", "layer_norm_block_sm90",
                   {random_gpu({rows, n}, dtype, next_seed(), 2.0),
                    random_gpu({n}, dtype, next_seed()), random_gpu({n}, dtype, next_seed())},
                   rows, n, dtype);
        FusedAddRMSNormFwdOp fused(1e-6);
        run_forced(fused, "fused_add_rms_norm", "fused_add_rms_norm_block_sm90",
                   {random_gpu({rows, n}, dtype, next_seed()),
                    random_gpu({rows, n}, dtype, next_seed()), random_gpu({n}, dtype, next_seed())},
                   rows, n, dtype);
      }
  }
}

// Rows of standard normal values plus a per-row offset, offsets[row % count] (in units of the
// values' standard deviation), on the device.
Tensor offset_rows_gpu(std::int64_t rows, std::int64_t n, DType dtype, std::uint64_t seed,
                       const std::vector<double>& offsets) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Tensor t = Tensor::empty({rows, n}, dtype);
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < n; ++i)
      store_from_double(dtype, offsets[static_cast<std::size_t>(r) % offsets.size()] + normal(rng),
                        bytes + static_cast<std::size_t>(r * n + i) * t.itemsize());
  return t.to(gpu(), dtype);
}

// A row whose mean is within sqrt(8) standard deviations of zero takes var = E[x^2] - mean^2, one
// further out the centered second reduction (Note [LayerNorm in one reduction] in
// kernels/norm/cuda/norm.cuh). Rows of offsets
// 0, 2.5 (inside), 3 (outside) and 300 (where E[x^2] - mean^2 keeps no correct digit in float32)
// alternate, so that logical warps sharing a hardware warp disagree; each path that computes
// LayerNorm from the moments is forced, with many rows (the register and staged kernels) and
// with fewer rows than multiprocessors (the few-rows kernel, alone and in clusters).
TEST(CudaNorm, LayerNormRowsNearAndFarFromZeroMean) {
  TILEOPS_REQUIRE_CUDA();
  const std::vector<double> offsets = {0.0, 2.5, 3.0, 300.0};
  struct Case {
    const char* key;
    std::int64_t n;
    std::int64_t rows;
  };
  const Case cases[] = {
      {"layer_norm_warp_sm90", 64, 64},      {"layer_norm_warp_sm90", 512, 300},
      {"layer_norm_block_sm90", 4096, 300},  {"layer_norm_block_sm90", 4096, 4},
      {"layer_norm_block_sm90", 16384, 4},   {"layer_norm_shared_sm90", 8192, 300},
      {"layer_norm_shared_sm90", 8192, 4},   {"layer_norm_fixed_sm90", 4096, 300},
      {"layer_norm_fixed_sm90", 16384, 300}, {"layer_norm_fixed_sm90", 8192, 3},
  };
  for (DType dtype : kFloatDTypes)
    for (const Case& c : cases) {
      // The fixed path holds 16-bit rows only.
      if (std::string(c.key) == "layer_norm_fixed_sm90" && dtype == DType::kFloat32) continue;
      SCOPED_TRACE(fmt::format("{} {} n={} rows={}", c.key, dtype_name(dtype), c.n, c.rows));
      EnvGuard force("TILEOPS_FORCE", c.key);
      LayerNormFwdOp op(Shape{c.n}, 1e-5);
      run_and_check(op,
                    {offset_rows_gpu(c.rows, c.n, dtype, next_seed(), offsets),
                     random_gpu({c.n}, dtype, next_seed()), random_gpu({c.n}, dtype, next_seed())},
                    CallOptions{poisoned_gpu({c.rows, c.n}, dtype)});
      EXPECT_EQ(only_key(op, "layer_norm"), c.key);
    }
}

// Each implementation forced on shapes it claims, checked; a misaligned call it refuses fails
// with its refusal.
TEST(CudaNorm, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  const char* paths[] = {"warp", "shared", "block", "streaming", "general"};
  for (const char* path : paths) {
    // RMSNorm has no shared path (Note [Staged rows]).
    const bool rms = std::string(path) != "shared";
    // Rows every vector path holds (short, middle: a warp holds 512 float32 elements) and, for
    // the paths beyond a warp, long ones.
    std::vector<std::int64_t> lengths = {64, 512};
    if (!rms) lengths = {4608};  // the shared path: rows of more than 8 KB in every dtype
    if (std::string(path) != "warp") lengths.push_back(8192);
    if (std::string(path) == "streaming" || std::string(path) == "general")
      lengths.push_back(40000);
    if (std::string(path) == "general") lengths.push_back(4097);
    for (DType dtype : kFloatDTypes)
      for (std::int64_t n : lengths) {
        SCOPED_TRACE(fmt::format("{} {} n={}", path, dtype_name(dtype), n));
        if (rms) {
          const std::string key = fmt::format("rms_norm_{}_sm90", path);
          EnvGuard force("TILEOPS_FORCE", key);
          RMSNormFwdOp op(Shape{n}, 1e-5);
          run_and_check(
              op, {random_gpu({5, n}, dtype, next_seed()), random_gpu({n}, dtype, next_seed())},
              CallOptions{poisoned_gpu({5, n}, dtype)});
          EXPECT_EQ(only_key(op, "rms_norm"), key);
        }
        {
          const std::string key = fmt::format("layer_norm_{}_sm90", path);
          EnvGuard force("TILEOPS_FORCE", key);
          LayerNormFwdOp op(Shape{n});
          run_and_check(op,
                        {random_gpu({5, n}, dtype, next_seed()),
                         random_gpu({n}, dtype, next_seed()), random_gpu({n}, dtype, next_seed())},
                        CallOptions{poisoned_gpu({5, n}, dtype)});
          EXPECT_EQ(only_key(op, "layer_norm"), key);
        }
        {
          const std::string key = fmt::format("fused_add_rms_norm_{}_sm90", path);
          EnvGuard force("TILEOPS_FORCE", key);
          FusedAddRMSNormFwdOp op(1e-5);
          run_and_check(
              op,
              {random_gpu({5, n}, dtype, next_seed()), random_gpu({5, n}, dtype, next_seed()),
               random_gpu({n}, dtype, next_seed())},
              CallOptions{poisoned_gpu({5, n}, dtype)});
          EXPECT_EQ(only_key(op, "fused_add_rms_norm"), key);
        }
      }
    if (std::string(path) == "general") continue;
    // A view two bytes past a 16-byte boundary: the forced vector path refuses, naming why, and
    // writes nothing; the instance stays usable.
    const std::string key = fmt::format("{}_{}_sm90", rms ? "rms_norm" : "layer_norm", path);
    EnvGuard force("TILEOPS_FORCE", key);
    const std::int64_t width = rms ? 1024 : 4608;  // a row the path serves when aligned
    RMSNormFwdOp rms_op(Shape{width});
    LayerNormFwdOp layer_op(Shape{width});
    Op& op = rms ? static_cast<Op&>(rms_op) : static_cast<Op&>(layer_op);
    const std::size_t inputs = rms ? 2 : 3;  // x and the optional affine tensors, absent
    std::vector<std::optional<Tensor>> misaligned(inputs);
    misaligned[0] = view_at_offset(random_host({3, width}, DType::kBFloat16, next_seed()), 2);
    const Tensor out = poisoned_gpu({3, width}, DType::kBFloat16);
    const std::string error =
        error_of<SelectionError>([&] { op.call(misaligned, CallOptions{out}); });
    EXPECT_NE(error.find("TILEOPS_FORCE=" + key + " refuses this call"), std::string::npos)
        << error;
    EXPECT_NE(error.find("aligned to 2 bytes"), std::string::npos) << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
    std::vector<std::optional<Tensor>> aligned(inputs);
    aligned[0] = random_gpu({3, width}, DType::kBFloat16, next_seed());
    run_and_check(op, aligned);
  }
}

// The fixed path (Note [Fixed rows] in kernels/norm/cuda/norm_fixed.cuh): each row length it has a
// kernel for, both 16-bit dtypes, with many rows (its own kernel, a block per row) and with fewer
// rows than multiprocessors (the few-rows kernel), every affine combination, forced; a 3-D input.
TEST(CudaNorm, TheFixedPathServesItsRowLengths) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t many = 2 * device_facts(gpu()).sm_count + 7;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16})
    for (std::int64_t n : {std::int64_t{4096}, std::int64_t{8192}, std::int64_t{16384}})
      for (std::int64_t rows : {std::int64_t{1}, std::int64_t{3}, many}) {
        SCOPED_TRACE(fmt::format("{} n={} rows={}", dtype_name(dtype), n, rows));
        for (bool weighted : {true, false}) {
          RMSNormFwdOp op(Shape{n}, 1e-5);
          std::optional<Tensor> w;
          if (weighted) w = random_gpu({n}, dtype, next_seed());
          run_forced(op, "rms_norm", "rms_norm_fixed_sm90",
                     {random_gpu({rows, n}, dtype, next_seed(), 3.0), w}, rows, n, dtype);
        }
        for (int affine = 0; affine < 4; ++affine) {  // none, weight, bias, both
          LayerNormFwdOp op(Shape{n}, 1e-5);
          std::optional<Tensor> w, b;
          if (affine & 1) w = random_gpu({n}, dtype, next_seed());
          if (affine & 2) b = random_gpu({n}, dtype, next_seed());
          run_forced(op, "layer_norm", "layer_norm_fixed_sm90",
                     {random_gpu({rows, n}, dtype, next_seed(), 2.0), w, b}, rows, n, dtype);
        }
      }
  EnvGuard force("TILEOPS_FORCE", "rms_norm_fixed_sm90");
  RMSNormFwdOp op(Shape{8192}, 1e-6);
  run_and_check(op,
                {random_gpu({3, 101, 8192}, DType::kBFloat16, next_seed()),
                 random_gpu({8192}, DType::kBFloat16, next_seed())},
                CallOptions{poisoned_gpu({3, 101, 8192}, DType::kBFloat16)});
  EXPECT_EQ(only_key(op, "rms_norm"), "rms_norm_fixed_sm90");
}

// Forced on a row length or dtype it has no kernel for, or on a misaligned view, the fixed path
// refuses, naming why, and writes nothing; the instance stays usable.
TEST(CudaNorm, TheFixedPathRefusesOtherRows) {
  TILEOPS_REQUIRE_CUDA();
  struct Case {
    const char* key;
    std::int64_t n;
    DType dtype;
    const char* reason;
  };
  for (const Case& c :
       {Case{"rms_norm_fixed_sm90", 4104, DType::kBFloat16,
             "rows of 4104 bfloat16 elements: this path has kernels for float16 "
             "and bfloat16 rows of 4096, 8192 and 16384 elements"},
        Case{"layer_norm_fixed_sm90", 4096, DType::kFloat32,
             "rows of 4096 float32 elements: this path has kernels for float16 "
             "and bfloat16 rows of 4096, 8192 and 16384 elements"},
        Case{"layer_norm_fixed_sm90", 12288, DType::kFloat16, "rows of 12288 float16 elements"}}) {
    SCOPED_TRACE(fmt::format("{} n={} {}", c.key, c.n, dtype_name(c.dtype)));
    EnvGuard force("TILEOPS_FORCE", c.key);
    LayerNormFwdOp layer(Shape{c.n});
    RMSNormFwdOp rms(Shape{c.n});
    const bool is_rms = std::string(c.key).starts_with("rms");
    Op& op = is_rms ? static_cast<Op&>(rms) : static_cast<Op&>(layer);
    std::vector<std::optional<Tensor>> inputs(is_rms ? 2 : 3);
    inputs[0] = random_gpu({2, c.n}, c.dtype, next_seed());
    const Tensor out = poisoned_gpu({2, c.n}, c.dtype);
    const std::string error = error_of<SelectionError>([&] { op.call(inputs, CallOptions{out}); });
    EXPECT_NE(error.find(std::string("TILEOPS_FORCE=") + c.key + " refuses this call"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(c.reason), std::string::npos) << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  }
  EnvGuard force("TILEOPS_FORCE", "layer_norm_fixed_sm90");
  LayerNormFwdOp op(Shape{4096});
  const Tensor out = poisoned_gpu({3, 4096}, DType::kBFloat16);
  const std::vector<std::optional<Tensor>> misaligned = {
      view_at_offset(random_host({3, 4096}, DType::kBFloat16, next_seed()), 2), std::nullopt,
      std::nullopt};
  const std::string error =
      error_of<SelectionError>([&] { op.call(misaligned, CallOptions{out}); });
  EXPECT_NE(error.find("aligned to 2 bytes"), std::string::npos) << error;
  for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  run_and_check(op,
                {random_gpu({3, 4096}, DType::kBFloat16, next_seed()), std::nullopt, std::nullopt});
  EXPECT_EQ(only_key(op, "layer_norm"), "layer_norm_fixed_sm90");
}

}  // namespace
}  // namespace tileops::test_cuda
