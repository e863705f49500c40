// The elementwise family (AddFwdOp, MulFwdOp) on the GPU against the float64 references: every
// dtype, the broadcast patterns the paths are built for ([M, N] with [N], [M, 1] and [1, N],
// channel broadcasts of 4-D tensors, a scalar, both inputs broadcasting), odd sizes, one row,
// empty tensors, strided views read in place, misaligned views, outputs poisoned before each run;
// every implementation forced on shapes it claims and refusing one it does not; a graph replay;
// and sizes past 32-bit indexing.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cuda_testing.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 5000;
  return seed++;
}

const DType kBinaryDTypes[] = {DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kInt32,
                               DType::kInt64};

Tensor random_values(const Shape& shape, DType dtype) {
  return random_gpu(shape, dtype, next_seed(), is_floating(dtype) ? 1.0 : 100.0);
}

Value alpha_for(DType dtype) { return is_floating(dtype) ? Value(0.5) : Value(std::int64_t{3}); }

using test_common::broadcast_shape;

// Runs add and mul on (a, b) into poisoned outputs and checks both; returns the keys that served.
std::pair<std::string, std::string> check_add_and_mul(const Tensor& a, const Tensor& b) {
  const DType dtype = a.dtype();
  AddFwdOp add(alpha_for(dtype));
  MulFwdOp mul;
  const Shape out = broadcast_shape(a.shape(), b.shape());
  run_and_check(add, {a, b}, CallOptions{poisoned_gpu(out, dtype)});
  run_and_check(mul, {a, b}, CallOptions{poisoned_gpu(out, dtype)});
  return {only_key(add, "add"), only_key(mul, "mul")};
}

struct Pattern {
  Shape a, b;
  const char* path;  // the path a 16-byte row serves, for every dtype
};

// The path that serves each pattern in every dtype: rows of 99, 63 or 7 elements are 16-byte
// multiples in none.
const Pattern kPatterns[] = {
    {{33, 128}, {33, 128}, "vector"},             // same shapes
    {{1, 4096}, {1, 4096}, "vector"},             // one row
    {{1001}, {1001}, "vector"},                   // an odd length: the vectors' tail
    {{7}, {7}, "vector"},                         // no whole vector at all in 16-bit types
    {{3, 5, 64}, {3, 5, 64}, "vector"},           // 3-D
    {{33, 128}, {128}, "broadcast"},              // bias
    {{5, 8}, {8}, "broadcast"},                   // a bias of one vector (or two, or four)
    {{37, 2040}, {2040}, "broadcast"},            // rows of 255 vectors: columns wrap in a block
    {{3, 4104}, {4104}, "broadcast"},             // rows of 513 vectors
    {{128}, {33, 128}, "broadcast"},              // a is the row
    {{9, 4096}, {1, 4096}, "broadcast"},          // [1, N]
    {{33, 128}, {33, 1}, "broadcast"},            // a value per row
    {{3, 5, 64}, {5, 64}, "broadcast"},           // 3-D with a 2-D bias
    {{2, 16, 8, 8}, {16, 1, 1}, "broadcast"},     // channel broadcast
    {{2, 16, 8, 8}, {1, 16, 1, 1}, "broadcast"},  // channel broadcast of rank 4
    {{33, 1}, {33, 128}, "broadcast"},            // a is the value per row
    {{16, 1, 1}, {2, 16, 8, 8}, "broadcast"},     // a is the channel's value
    {{40, 8}, {40, 1}, "broadcast"},              // values per row of one vector (or 2, or 4)
    {{3, 5, 16}, {5, 1}, "broadcast"},            // an odd channel count
    {{128}, {33, 1}, "broadcast"},                // both inputs broadcast
    {{33, 128}, {}, "broadcast"},                 // a scalar
    {{33, 99}, {99}, "general"},                  // rows of 99 elements
    {{2, 16, 7, 9}, {16, 1, 1}, "general"},       // channel broadcast, rows of 63 elements
    {{4, 1, 7}, {5, 1}, "general"},               // both broadcast, rows of 7
    {{}, {7}, "general"},
    {{1, 1}, {1}, "general"},  // one element: a row of one
};

TEST(CudaElementwise, EveryDtypeAndBroadcastPattern) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kBinaryDTypes)
    for (const Pattern& p : kPatterns) {
      SCOPED_TRACE(fmt::format("{} {} {}", dtype_name(dtype), p.a.str(), p.b.str()));
      const auto [add_key, mul_key] =
          check_add_and_mul(random_values(p.a, dtype), random_values(p.b, dtype));
      EXPECT_EQ(add_key, fmt::format("add_{}_sm90", p.path));
      EXPECT_EQ(mul_key, fmt::format("mul_{}_sm90", p.path));
    }
}

TEST(CudaElementwise, IntegersWrap) {
  TILEOPS_REQUIRE_CUDA();
  Tensor a = Tensor::empty({3}, DType::kInt32);
  Tensor b = Tensor::empty({3}, DType::kInt32);
  const std::int32_t av[] = {2147483647, -2147483647 - 1, 65536};
  const std::int32_t bv[] = {1, -1, 65536};
  std::memcpy(a.data_ptr(), av, sizeof(av));
  std::memcpy(b.data_ptr(), bv, sizeof(bv));
  AddFwdOp add(Value(std::int64_t{1}));
  MulFwdOp mul;
  const Tensor sum = add(a.to(gpu(), DType::kInt32), b.to(gpu(), DType::kInt32));
  const Tensor product = mul(a.to(gpu(), DType::kInt32), b.to(gpu(), DType::kInt32));
  const Tensor sum_host = sum.to(Device::cpu(), DType::kInt32);
  const Tensor product_host = product.to(Device::cpu(), DType::kInt32);
  EXPECT_EQ(sum_host.data<const std::int32_t>()[0], -2147483647 - 1);
  EXPECT_EQ(sum_host.data<const std::int32_t>()[1], 2147483647);
  EXPECT_EQ(product_host.data<const std::int32_t>()[2], 0);
  // int64 with a wrapping alpha: 2^62 * 4 wraps to 0.
  Tensor c = Tensor::empty({1}, DType::kInt64);
  c.data<std::int64_t>()[0] = std::int64_t{1} << 62;
  AddFwdOp scaled(Value(std::int64_t{4}));
  Tensor one = Tensor::empty({1}, DType::kInt64);
  one.data<std::int64_t>()[0] = 1;
  const Tensor r = scaled(one.to(gpu(), DType::kInt64), c.to(gpu(), DType::kInt64))
                       .to(Device::cpu(), DType::kInt64);
  EXPECT_EQ(r.data<const std::int64_t>()[0], 1);
}

TEST(CudaElementwise, EmptyTensorsLaunchNothing) {
  TILEOPS_REQUIRE_CUDA();
  AddFwdOp add;
  const Tensor y = add(Tensor::empty({0, 64}, DType::kBFloat16, gpu()),
                       random_gpu({64}, DType::kBFloat16, next_seed()));
  EXPECT_EQ(y.shape(), (Shape{0, 64}));
  EXPECT_EQ(y.device(), gpu());
  EXPECT_TRUE(add.built_entries("add").empty());
  MulFwdOp mul;
  EXPECT_EQ(
      mul(Tensor::empty({5, 0}, DType::kInt32, gpu()), Tensor::empty({5, 1}, DType::kInt32, gpu()))
          .shape(),
      (Shape{5, 0}));
}

// Views reach the kernels as they are: a transposed input takes the general path (its rows are
// strided), a slice whose rows are unit-stride and aligned the broadcast path.
TEST(CudaElementwise, StridedViewsAreReadInPlace) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kBinaryDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto item = static_cast<std::int64_t>(dtype_size(dtype));
    const Tensor base = random_values({256, 33}, dtype);
    const Tensor transposed = base.as_strided({33, 256}, {1, 33}, 0);
    ASSERT_FALSE(transposed.is_contiguous());
    auto keys = check_add_and_mul(transposed, random_values({33, 256}, dtype));
    EXPECT_EQ(keys.first, "add_general_sm90");
    EXPECT_EQ(keys.second, "mul_general_sm90");
    keys = check_add_and_mul(transposed, random_values({256}, dtype));  // strided and a bias
    EXPECT_EQ(keys.first, "add_general_sm90");
    // The right half of [33, 256] rows: rows of 128 elements 256 apart, 16-byte aligned.
    const Tensor wide = random_values({33, 256}, dtype);
    const Tensor half = wide.as_strided({33, 128}, {256, 1}, 128 * item);
    ASSERT_FALSE(half.is_contiguous());
    keys = check_add_and_mul(half, random_values({33, 128}, dtype));
    EXPECT_EQ(keys.first, "add_broadcast_sm90");
    EXPECT_EQ(keys.second, "mul_broadcast_sm90");
    keys = check_add_and_mul(random_values({33, 128}, dtype), half);
    EXPECT_EQ(keys.first, "add_broadcast_sm90");
    // A bias over the slice: rows 256 apart are not one run, so the rows kernel and not the
    // repeated row serves it.
    keys = check_add_and_mul(half, random_values({128}, dtype));
    EXPECT_EQ(keys.first, "add_broadcast_sm90");
    // A 4-D view with every other channel: [2, 8, 4, 16] out of [2, 16, 4, 16].
    const Tensor maps = random_values({2, 16, 4, 16}, dtype);
    const Tensor channels = maps.as_strided({2, 8, 4, 16}, {1024, 128, 16, 1}, 0);
    check_add_and_mul(channels, random_values({8, 1, 1}, dtype));
    // A value per row read at a stride: every other element of a column.
    const Tensor column = random_values({66}, dtype);
    keys =
        check_add_and_mul(random_values({33, 128}, dtype), column.as_strided({33, 1}, {2, 1}, 0));
    EXPECT_EQ(keys.first, "add_broadcast_sm90");
    // A stride-0 (expanded) input, as torch's expand makes.
    const Tensor row = random_values({128}, dtype);
    check_add_and_mul(row.as_strided({9, 128}, {0, 1}, 0), random_values({9, 128}, dtype));
  }
}

TEST(CudaElementwise, MisalignedViewsTakeTheGeneralPath) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kBinaryDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // One element past a 16-byte boundary.
    const auto offset = static_cast<std::int64_t>(dtype_size(dtype));
    const Tensor a = view_at_offset(random_host({7, 256}, dtype, next_seed(), 10.0), offset);
    auto keys = check_add_and_mul(a, random_values({7, 256}, dtype));
    EXPECT_EQ(keys.first, "add_general_sm90");
    keys = check_add_and_mul(random_values({7, 256}, dtype), a);
    EXPECT_EQ(keys.second, "mul_general_sm90");
    keys = check_add_and_mul(random_values({7, 256}, dtype),
                             view_at_offset(random_host({256}, dtype, next_seed(), 10.0), offset));
    EXPECT_EQ(keys.first, "add_general_sm90");
    // A misaligned out buffer counts too.
    AddFwdOp into(alpha_for(dtype));
    run_and_check(into, {random_values({7, 256}, dtype), random_values({7, 256}, dtype)},
                  CallOptions{view_at_offset(random_host({7, 256}, dtype, next_seed()), offset)});
    EXPECT_EQ(only_key(into, "add"), "add_general_sm90");
  }
}

// Each implementation forced on shapes it claims, checked; a call it refuses fails with its
// reason and writes nothing.
TEST(CudaElementwise, EveryImplementationForced) {
  TILEOPS_REQUIRE_CUDA();
  struct Claim {
    const char* path;
    std::vector<Pattern> shapes;
  };
  const Claim claims[] = {
      {"vector", {{{5, 1024}, {5, 1024}, ""}, {{1001}, {1001}, ""}}},
      {"broadcast", {{{5, 1024}, {5, 1024}, ""}, {{5, 1024}, {1024}, ""}, {{5, 64}, {5, 1}, ""}}},
      {"general",
       {{{5, 1024}, {5, 1024}, ""},
        {{5, 1024}, {1024}, ""},
        {{5, 63}, {5, 1}, ""},
        {{2, 3, 5, 7}, {3, 1, 1}, ""}}},
  };
  for (const Claim& claim : claims)
    for (DType dtype : kBinaryDTypes)
      for (const Pattern& p : claim.shapes)
        for (const char* op_name : {"add", "mul"}) {
          SCOPED_TRACE(fmt::format("{} {} {} {} {}", claim.path, op_name, dtype_name(dtype),
                                   p.a.str(), p.b.str()));
          const std::string key = fmt::format("{}_{}_sm90", op_name, claim.path);
          EnvGuard force("TILEOPS_FORCE", key);
          const Tensor a = random_values(p.a, dtype), b = random_values(p.b, dtype);
          const Tensor out = poisoned_gpu(broadcast_shape(p.a, p.b), dtype);
          if (std::string(op_name) == "add") {
            AddFwdOp op(alpha_for(dtype));
            run_and_check(op, {a, b}, CallOptions{out});
            EXPECT_EQ(only_key(op, "add"), key);
          } else {
            MulFwdOp op;
            run_and_check(op, {a, b}, CallOptions{out});
            EXPECT_EQ(only_key(op, "mul"), key);
          }
        }
  struct Refusal {
    const char* key;
    Tensor a, b;
    const char* reason;
  };
  const DType bf16 = DType::kBFloat16;
  const Tensor base = random_gpu({64, 8}, bf16, next_seed());
  const Refusal refusals[] = {
      {"add_vector_sm90", random_gpu({8, 64}, bf16, next_seed()),
       random_gpu({64}, bf16, next_seed()), "the inputs broadcast"},
      {"add_vector_sm90", base.as_strided({8, 64}, {1, 8}, 0),
       random_gpu({8, 64}, bf16, next_seed()), "non-contiguous view"},
      {"add_broadcast_sm90", view_at_offset(random_host({8, 64}, bf16, next_seed()), 2),
       random_gpu({8, 64}, bf16, next_seed()), "aligned to 2 bytes"},
      {"add_broadcast_sm90", base.as_strided({8, 64}, {1, 8}, 0),
       random_gpu({64}, bf16, next_seed()), "stride other than 1"},
      {"add_broadcast_sm90", random_gpu({8, 63}, bf16, next_seed()),
       random_gpu({63}, bf16, next_seed()), "rows of the merged layout are aligned to 2 bytes"},
  };
  for (const Refusal& r : refusals) {
    SCOPED_TRACE(r.key);
    EnvGuard force("TILEOPS_FORCE", r.key);
    AddFwdOp op;
    const Tensor out = poisoned_gpu(broadcast_shape(r.a.shape(), r.b.shape()), bf16);
    const std::string error = error_of<SelectionError>([&] { op(r.a, r.b, {out}); });
    EXPECT_NE(error.find(std::string("TILEOPS_FORCE=") + r.key + " refuses this call"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(r.reason), std::string::npos) << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  }
}

// Axes that cannot merge (each input broadcasting on every other axis) beyond the kernels' 8 are
// refused with the count, by every CUDA path.
TEST(CudaElementwise, MoreThanEightMergedAxesAreRefused) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kFloat32;
  AddFwdOp add;
  const Tensor a = random_gpu({2, 1, 2, 1, 2, 1, 2, 1, 2}, dtype, next_seed());
  const Tensor b = random_gpu({1, 2, 1, 2, 1, 2, 1, 2, 1}, dtype, next_seed());
  const std::string error = error_of<SelectionError>([&] { add(a, b); });
  EXPECT_NE(error.find("add_general_sm90 (AddGeneralSm90: 9 axes remain after merging"),
            std::string::npos)
      << error;
  // Eight are served.
  run_and_check(add, {random_gpu({2, 1, 2, 1, 2, 1, 2, 1}, dtype, next_seed()),
                      random_gpu({1, 2, 1, 2, 1, 2, 1, 2}, dtype, next_seed())});
  EXPECT_EQ(only_key(add, "add"), "add_general_sm90");
}

TEST(CudaElementwise, GraphReplayOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    const StreamGuard guard(Stream(gpu(), stream));
    const DType dtype = DType::kBFloat16;
    AddFwdOp add(Value(0.5));
    MulFwdOp mul;
    Tensor a = random_gpu({64, 4096}, dtype, next_seed());
    Tensor bias = random_gpu({4096}, dtype, next_seed());
    Tensor y = poisoned_gpu({64, 4096}, dtype);
    Tensor z = poisoned_gpu({64, 4096}, dtype);
    add(a, bias, {y});  // warm-up: the entries are built outside the capture
    mul(a, a, {z});
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    add(a, bias, {y});
    mul(a, a, {z});
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    a.copy_from(random_host({64, 4096}, dtype, next_seed()));
    y.copy_from(poisoned_gpu({64, 4096}, dtype));
    z.copy_from(poisoned_gpu({64, 4096}, dtype));
    const references::Inputs before_add = host_inputs({a, bias});
    const references::Inputs before_mul = host_inputs({a, a});
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    expect_matches_reference(add, before_add, {a, bias}, {y});
    expect_matches_reference(mul, before_mul, {a, a}, {z});
    EXPECT_EQ(only_key(add, "add"), "add_broadcast_sm90");
    EXPECT_EQ(only_key(mul, "mul"), "mul_vector_sm90");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// 2^31 + 32 bfloat16 elements, every byte 0x3F (0.74609375): each path's offsets past 2^31 are
// checked at the ends of the tensor. Memcheck skips this test (its name).
TEST(CudaElementwise, SizesPast32BitIndexing) {
  TILEOPS_REQUIRE_CUDA();
  const DType dtype = DType::kBFloat16;
  const std::int64_t n = (std::int64_t{1} << 31) + 32;
  Tensor a = Tensor::empty({n}, dtype, gpu());
  ASSERT_EQ(cudaMemset(a.data_ptr(), 0x3F, static_cast<std::size_t>(a.nbytes())), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double value = 0.74609375;
  auto expect_ends = [&](const Tensor& out, double expected) {
    for (std::int64_t first : {std::int64_t{0}, (std::int64_t{1} << 31) - 32, n - 64}) {
      const Tensor view = out.as_strided({64}, {1}, first * 2);
      for (double v : host_values(view).values) ASSERT_EQ(v, expected) << "at " << first;
    }
  };
  {
    AddFwdOp add;
    expect_ends(add(a, a), 2 * value);  // exact in bfloat16
    EXPECT_EQ(only_key(add, "add"), "add_vector_sm90");
  }
  {
    // a as [2, n / 2] times its first row: offsets past 2^31 elements on the broadcast path.
    MulFwdOp mul;
    const Tensor rows = a.as_strided({2, n / 2}, {n / 2, 1}, 0);
    const Tensor out = mul(rows, a.as_strided({n / 2}, {1}, 0));
    EXPECT_EQ(only_key(mul, "mul"), "mul_broadcast_sm90");
    expect_ends(out.as_strided({n}, {1}, 0), references::round_to(dtype, value * value));
  }
  {
    // The general path: one element past the aligned start.
    AddFwdOp add;
    const Tensor shifted = a.as_strided({n - 8}, {1}, 2);
    const Tensor out = add(shifted, shifted);
    EXPECT_EQ(only_key(add, "add"), "add_general_sm90");
    const Tensor view = out.as_strided({64}, {1}, (n - 8 - 64) * 2);
    for (double v : host_values(view).values) ASSERT_EQ(v, 2 * value);
  }
}

}  // namespace
}  // namespace tileops::test_cuda
