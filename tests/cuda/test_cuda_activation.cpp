// The activation family (SiluFwdOp, GeluFwdOp in both forms, SiluAndMulFwdOp, GeluAndMulFwdOp) on
// the GPU against the float64 references: every dtype, odd sizes and gated widths N that reach
// each path, every finite 16-bit input, one row, empty tensors, 3-D and 4-D inputs, non-contiguous
// and misaligned views, outputs poisoned before each run; every implementation forced on shapes it
// claims and refusing one it does not; a graph replay; and sizes past 32-bit indexing.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_testing.hpp"
#include "tileops/ops/activation.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 7000;
  return seed++;
}

// The ops by key prefix, GELU in its two forms.
struct Activation {
  const char* prefix;  // of the implementation keys, and the interface's name
  const char* form;    // GELU's approximate, or "" for SiLU
  bool gated;
};
const Activation kActivations[] = {
    {"silu", "", false},        {"gelu", "none", false},        {"gelu", "tanh", false},
    {"silu_and_mul", "", true}, {"gelu_and_mul", "none", true}, {"gelu_and_mul", "tanh", true},
};

std::unique_ptr<Op> make(const Activation& a) {
  const std::string prefix = a.prefix;
  if (prefix == "silu") return std::make_unique<SiluFwdOp>();
  if (prefix == "gelu") return std::make_unique<GeluFwdOp>(a.form);
  if (prefix == "silu_and_mul") return std::make_unique<SiluAndMulFwdOp>();
  return std::make_unique<GeluAndMulFwdOp>(a.form);
}

// x's shape for an output of `out` (the gated ops read twice the last axis).
Shape input_shape(const Activation& a, Shape out) {
  if (a.gated) out[out.size() - 1] *= 2;
  return out;
}

// Runs `a` on x of the output shape `out` into a poisoned buffer and checks it; returns the key.
std::string check(const Activation& a, const Tensor& x, const Shape& out) {
  std::unique_ptr<Op> op = make(a);
  run_and_check(*op, {x}, CallOptions{poisoned_gpu(out, x.dtype())});
  return only_key(*op, a.prefix);
}

std::string key(const Activation& a, const char* path) {
  return fmt::format("{}_{}_sm90", a.prefix, path);
}

// Output shapes: rows of N = 1, 7, 4097 (no vector multiple), 64, 1000, 14336, one row, 3-D, 4-D.
const Shape kShapes[] = {{33, 1},    {33, 7},   {5, 4097},   {33, 64},      {9, 1000},
                         {3, 14336}, {1, 4096}, {2, 3, 256}, {2, 3, 4, 40}, {1001}};

TEST(CudaActivation, EveryDtypeAndShape) {
  TILEOPS_REQUIRE_CUDA();
  for (const Activation& a : kActivations)
    for (DType dtype : kFloatDTypes)
      for (const Shape& out : kShapes) {
        SCOPED_TRACE(fmt::format("{} {} {} {}", a.prefix, a.form, dtype_name(dtype), out.str()));
        // Wide enough that GELU's tails and SiLU's saturation are reached.
        const Tensor x = random_gpu(input_shape(a, out), dtype, next_seed(), 4.0);
        const std::string got = check(a, x, out);
        // The gated vector path needs N's bytes to be a multiple of 16; the elementwise one only
        // aligned pointers (the tail runs element by element).
        const auto n_bytes = out[out.size() - 1] * static_cast<std::int64_t>(dtype_size(dtype));
        const bool vector = !a.gated || n_bytes % 16 == 0;
        EXPECT_EQ(got, key(a, vector ? "vector" : "general"));
      }
}

// Few blocks (Note [Few blocks] in activation.cuh): a call of fewer blocks than multiprocessors at
// four packs per thread takes one pack per thread. Shapes on both sides of that bound: S - 1 and S
// blocks' worth of packs (S multiprocessors), the elementwise ones with a tail of 5 elements past
// the last vector.
TEST(CudaActivation, CallsOnBothSidesOfTheFewBlocksBound) {
  TILEOPS_REQUIRE_CUDA();
  const std::int64_t sms = device_facts(gpu()).sm_count;
  for (const Activation& a : kActivations)
    for (DType dtype : {DType::kBFloat16, DType::kFloat32})
      for (std::int64_t blocks : {sms - 1, sms}) {
        const std::int64_t per_vector = 16 / static_cast<std::int64_t>(dtype_size(dtype));
        // Gated: rows of 1024 vectors are one tile of 256 lanes each; elementwise: one run.
        const Shape out =
            a.gated ? Shape{blocks, 1024 * per_vector} : Shape{blocks * 256 * 4 * per_vector + 5};
        SCOPED_TRACE(fmt::format("{} {} {} {}", a.prefix, a.form, dtype_name(dtype), out.str()));
        const Tensor x = random_gpu(input_shape(a, out), dtype, next_seed(), 4.0);
        EXPECT_EQ(check(a, x, out), key(a, "vector"));
      }
}

TEST(CudaActivation, EmptyTensorsLaunchNothing) {
  TILEOPS_REQUIRE_CUDA();
  for (const Activation& a : kActivations)
    for (const Shape& out : {Shape{0, 64}, Shape{5, 0}}) {
      SCOPED_TRACE(fmt::format("{} {} {}", a.prefix, a.form, out.str()));
      std::unique_ptr<Op> op = make(a);
      const CallResult r = op->call(std::vector<std::optional<Tensor>>{
          Tensor::empty(input_shape(a, out), DType::kBFloat16, gpu())});
      EXPECT_EQ(r.at(0)->shape(), out);
      EXPECT_TRUE(op->built_entries(a.prefix).empty());
    }
}

// A strided x is copied to a contiguous one first (the kernels read contiguous rows).
TEST(CudaActivation, NonContiguousInputs) {
  TILEOPS_REQUIRE_CUDA();
  for (const Activation& a : kActivations)
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(fmt::format("{} {} {}", a.prefix, a.form, dtype_name(dtype)));
      const Shape in = input_shape(a, {6, 512});
      const Tensor base = random_gpu({in[1], in[0]}, dtype, next_seed(), 3.0);
      const Tensor x = base.as_strided(in, {1, in[0]}, 0);
      ASSERT_FALSE(x.is_contiguous());
      EXPECT_EQ(check(a, x, {6, 512}), key(a, "vector"));
    }
}

TEST(CudaActivation, MisalignedViewsTakeTheGeneralPath) {
  TILEOPS_REQUIRE_CUDA();
  for (const Activation& a : kActivations)
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(fmt::format("{} {} {}", a.prefix, a.form, dtype_name(dtype)));
      const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
      const Shape out{7, 512};
      const Tensor x =
          view_at_offset(random_host(input_shape(a, out), dtype, next_seed(), 3.0), offset);
      EXPECT_EQ(check(a, x, out), key(a, "general"));
      // A misaligned out buffer counts too.
      std::unique_ptr<Op> op = make(a);
      run_and_check(*op, {random_gpu(input_shape(a, out), dtype, next_seed())},
                    CallOptions{view_at_offset(random_host(out, dtype, next_seed()), offset)});
      EXPECT_EQ(only_key(*op, a.prefix), key(a, "general"));
    }
}

// Every finite float16 and bfloat16 value through each op, on both paths: the 16-bit kernels
// compute GELU with the hardware exp2 and reciprocal (Note [Activation kernels]), whose error is
// checked here over the whole input range, tails and saturation included, not only at random
// points. Gated ops read the values as the gate, with an up half of ones.
TEST(CudaActivation, EveryFinite16BitInput) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    std::vector<std::uint16_t> finite;
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const std::uint16_t b = static_cast<std::uint16_t>(bits);
      // All-ones exponent: infinities and NaNs.
      const bool special =
          dtype == DType::kFloat16 ? (b & 0x7C00u) == 0x7C00u : (b & 0x7F80u) == 0x7F80u;
      if (!special) finite.push_back(b);
    }
    const std::int64_t n = 256;
    const std::int64_t rows = (static_cast<std::int64_t>(finite.size()) + n - 1) / n;
    for (const Activation& a : kActivations) {
      const Shape out{rows, n};
      Tensor x = Tensor::empty(input_shape(a, out), dtype);
      auto* data = static_cast<std::uint16_t*>(x.data_ptr());
      const std::uint16_t one = dtype == DType::kFloat16 ? 0x3C00u : 0x3F80u;
      const std::int64_t width = a.gated ? 2 * n : n;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < width; ++c) {
          const auto k = static_cast<std::size_t>(r * n + (c % n));
          data[r * width + c] = c >= n ? one : k < finite.size() ? finite[k] : std::uint16_t{0};
        }
      for (const char* path : {"vector", "general"}) {
        SCOPED_TRACE(fmt::format("{} {} {} {}", a.prefix, a.form, dtype_name(dtype), path));
        EnvGuard force("TILEOPS_FORCE", key(a, path));
        EXPECT_EQ(check(a, x.to(gpu(), dtype), out), key(a, path));
      }
    }
  }
}

// Each implementation forced on shapes it claims, checked; a call it refuses fails with its
// reason and writes nothing.
TEST(CudaActivation, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  for (const Activation& a : kActivations)
    for (const char* path : {"vector", "general"})
      for (DType dtype : kFloatDTypes)
        for (const Shape& out : {Shape{5, 1024}, Shape{1, 64}, Shape{3, 4097}}) {
          if (std::string(path) == "vector" && a.gated && out[1] == 4097) continue;
          SCOPED_TRACE(
              fmt::format("{} {} {} {} {}", a.prefix, a.form, path, dtype_name(dtype), out.str()));
          EnvGuard force("TILEOPS_FORCE", key(a, path));
          EXPECT_EQ(check(a, random_gpu(input_shape(a, out), dtype, next_seed(), 3.0), out),
                    key(a, path));
        }
  const DType bf16 = DType::kBFloat16;
  for (const Activation& a : kActivations) {
    SCOPED_TRACE(fmt::format("{} {}", a.prefix, a.form));
    EnvGuard force("TILEOPS_FORCE", key(a, "vector"));
    struct Refused {
      Shape out;
      Tensor x;
      const char* reason;
    };
    std::vector<Refused> refused;
    refused.push_back({{3, 1024},
                       view_at_offset(random_host(input_shape(a, {3, 1024}), bf16, next_seed()), 2),
                       "aligned to 2 bytes"});
    if (a.gated)
      refused.push_back({{3, 1001},
                         random_gpu(input_shape(a, {3, 1001}), bf16, next_seed()),
                         "halves of a row (N elements each) are aligned to 2 bytes"});
    for (const Refused& r : refused) {
      std::unique_ptr<Op> op = make(a);
      const Tensor out = poisoned_gpu(r.out, bf16);
      const std::string error = error_of<SelectionError>(
          [&] { op->call(std::vector<std::optional<Tensor>>{r.x}, CallOptions{out}); });
      EXPECT_NE(error.find("TILEOPS_FORCE=" + key(a, "vector") + " refuses this call"),
                std::string::npos)
          << error;
      EXPECT_NE(error.find(r.reason), std::string::npos) << error;
      for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
    }
  }
}

TEST(CudaActivation, GraphReplayOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    const StreamGuard guard(Stream(gpu(), stream));
    const DType dtype = DType::kBFloat16;
    SiluAndMulFwdOp gated;
    GeluAndMulFwdOp gelu_gated("none");
    SiluFwdOp silu;
    GeluFwdOp gelu("tanh");
    GeluFwdOp gelu_erf("none");
    Tensor x = random_gpu({64, 2 * 4096}, dtype, next_seed());
    Tensor y = poisoned_gpu({64, 4096}, dtype);
    Tensor y_gelu = poisoned_gpu({64, 4096}, dtype);
    Tensor z = poisoned_gpu({64, 2 * 4096}, dtype);
    Tensor z_silu = poisoned_gpu({64, 2 * 4096}, dtype);
    Tensor z_erf = poisoned_gpu({64, 2 * 4096}, dtype);
    const auto calls = [&] {
      gated(x, {y});
      gelu_gated(x, {y_gelu});
      silu(x, {z_silu});
      gelu(x, {z});
      gelu_erf(x, {z_erf});
    };
    CapturedCalls graph(stream, calls);
    x.copy_from(random_host({64, 2 * 4096}, dtype, next_seed()));
    for (Tensor* out : {&y, &y_gelu, &z, &z_silu, &z_erf})
      out->copy_from(poisoned_gpu(out->shape(), dtype));
    const references::Inputs before = host_inputs({x});
    graph.replay();
    expect_matches_reference(gated, before, {x}, {y});
    expect_matches_reference(gelu_gated, before, {x}, {y_gelu});
    expect_matches_reference(silu, before, {x}, {z_silu});
    expect_matches_reference(gelu, before, {x}, {z});
    expect_matches_reference(gelu_erf, before, {x}, {z_erf});
  }
  cudaStreamDestroy(stream);
}

// x of 2^31 + 32 bfloat16 elements, every byte 0x3F (0.74609375): the ends of the output, whose
// offsets (or, gated, whose input's offsets) pass 2^31. Memcheck skips this test (its name).
TEST(CudaActivation, SizesPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kBFloat16;
  const std::int64_t n = (std::int64_t{1} << 31) + 32;
  Tensor x = Tensor::empty({n}, dtype, gpu());
  ASSERT_EQ(cudaMemset(x.data_ptr(), 0x3F, static_cast<std::size_t>(x.nbytes())), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double g = 0.74609375;
  const double silu = g / (1.0 + std::exp(-g));
  const double tol = std::ldexp(silu, -7);
  auto expect_ends = [&](const Tensor& out, double expected) {
    const std::int64_t count = out.numel();
    for (std::int64_t first : {std::int64_t{0}, count / 2 - 8, count - 64}) {
      const Tensor view = out.as_strided({64}, {1}, first * 2);
      for (double v : host_values(view).values) ASSERT_NEAR(v, expected, tol) << "at " << first;
    }
  };
  {
    SiluFwdOp op;
    expect_ends(op(x), silu);
    EXPECT_EQ(only_key(op, "silu"), "silu_vector_sm90");
  }
  {
    // Two rows of 2 N = n / 2: the second row's up half starts past 2^31 elements.
    SiluAndMulFwdOp op;
    const Tensor out = op(x.as_strided({2, n / 2}, {n / 2, 1}, 0));
    EXPECT_EQ(only_key(op, "silu_and_mul"), "silu_and_mul_vector_sm90");
    expect_ends(out.as_strided({n / 2}, {1}, 0), silu * g);
  }
}

}  // namespace
}  // namespace tileops::test_cuda
