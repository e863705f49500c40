// The CUDA runtime of the library on a GPU: the stream-ordered allocator (and a replacement),
// device copies, default streams, CUDA-graph capture of op calls, and bad input: tensors on
// another or a missing device, an unsupported architecture, sizes past 32-bit indexing, a fault
// inside a kernel.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>

#include "cuda_testing.hpp"
#include "test_stream.hpp"
#include "tileops/core/allocator.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/op/accelerator.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/norm.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 5000;
  return seed++;
}

// ---- Allocator -----------------------------------------------------------------------------

TEST(CudaRuntime, TheBuiltInAllocatorGivesDeviceMemoryOnTheCallsStream) {
  TILEOPS_REQUIRE_CUDA();
  const Tensor t = Tensor::empty({1024}, DType::kFloat32, gpu());
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, t.data_ptr()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 256, 0u);
}

// Records the streams it allocates on and hands the work to the allocator it replaced.
class RecordingAllocator final : public Allocator {
 public:
  explicit RecordingAllocator(std::shared_ptr<Allocator> inner) : inner_(std::move(inner)) {}
  DeviceType device_type() const noexcept override { return DeviceType::kCUDA; }
  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(stream);
    return inner_->allocate(nbytes, stream);
  }
  std::vector<Stream> streams() {
    std::lock_guard<std::mutex> lock(mutex_);
    return streams_;
  }

 private:
  std::shared_ptr<Allocator> inner_;
  std::mutex mutex_;
  std::vector<Stream> streams_;
};

TEST(CudaRuntime, AReplacedAllocatorServesTheCallsOnTheirStream) {
  TILEOPS_REQUIRE_CUDA();
  auto recording = std::make_shared<RecordingAllocator>(allocator_for(DeviceType::kCUDA));
  const std::shared_ptr<Allocator> previous = set_allocator(DeviceType::kCUDA, recording);
  {
    TestStream s;
    RMSNormFwdOp op(Shape{512});
    const Tensor x = random_gpu({4, 512}, DType::kBFloat16, next_seed());
    const std::size_t before = recording->streams().size();
    const Stream explicit_stream = s.stream();
    run_and_check(op, {x, std::nullopt}, CallOptions{std::nullopt, &explicit_stream});
    const std::vector<Stream> streams = recording->streams();
    ASSERT_EQ(streams.size(), before + 1);  // the output, on the call's stream
    EXPECT_EQ(streams.back(), explicit_stream);
  }
  set_allocator(DeviceType::kCUDA, previous);
}

TEST(CudaRuntime, TheDefaultStreamIsARealHandleNotTheLegacyStream) {
  TILEOPS_REQUIRE_CUDA();
  void* handle = cuda::native_stream(Stream::default_for(gpu()));
  EXPECT_NE(handle, nullptr);
  EXPECT_NE(handle, static_cast<void*>(cudaStreamLegacy));
  EXPECT_NE(handle, static_cast<void*>(cudaStreamPerThread));
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(static_cast<cudaStream_t>(handle), &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
  EXPECT_EQ(cuda::native_stream(Stream::default_for(gpu())), handle);  // one per device
}

// ---- Device copies -------------------------------------------------------------------------

TEST(CudaRuntime, ToAndFromTheDeviceRoundTripsBitForBit) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : {DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kInt64,
                      DType::kInt8, DType::kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor host = dtype == DType::kInt64 || dtype == DType::kInt8
                            ? Tensor::empty({3, 5}, dtype)
                            : random_host({3, 5}, dtype, next_seed());
    if (!is_floating(dtype))
      for (std::size_t b = 0; b < host.nbytes(); ++b)
        static_cast<unsigned char*>(host.data_ptr())[b] = static_cast<unsigned char>(b * 7 + 1);
    const Tensor device = host.to(gpu(), dtype);
    EXPECT_EQ(device.device(), gpu());
    const Tensor back = device.to(Device::cpu(), dtype);
    EXPECT_EQ(std::memcmp(back.data_ptr(), host.data_ptr(), host.nbytes()), 0);
  }
  // A dtype change on the way (done on the host): bfloat16 -> float32 is exact.
  const Tensor bf = random_host({7}, DType::kBFloat16, next_seed());
  const Tensor wide = bf.to(gpu(), DType::kFloat32);
  EXPECT_EQ(host_values(wide).values, host_values(bf).values);
}

TEST(CudaRuntime, ContiguousGathersAStridedDeviceTensor) {
  TILEOPS_REQUIRE_CUDA();
  const Tensor host = random_host({6, 10, 4}, DType::kFloat16, next_seed());
  const Tensor device = host.to(gpu(), DType::kFloat16);
  // Axes 0 and 2 swapped, and every other column: neither merges into one run.
  const Shape shape{4, 5, 6};
  const Shape strides{1, 8, 40};
  const Tensor dv = device.as_strided(shape, strides, 0);
  const Tensor hv = host.as_strided(shape, strides, 0);
  const Tensor packed = dv.contiguous();
  EXPECT_TRUE(packed.is_contiguous());
  EXPECT_EQ(packed.device(), gpu());
  EXPECT_EQ(host_values(packed).values, host_values(hv.contiguous()).values);
}

TEST(CudaRuntime, CopyFromIntoStridedAndOverlappingDeviceViews) {
  TILEOPS_REQUIRE_CUDA();
  const Tensor src = random_host({4, 3}, DType::kFloat32, next_seed());
  Tensor dst_base = Tensor::empty({3, 8}, DType::kFloat32, gpu());
  Tensor dst = dst_base.as_strided({4, 3}, {1, 8}, 0);  // a transposed, strided destination
  dst.copy_from(src);
  EXPECT_EQ(host_values(dst).values, host_values(src).values);
  // Overlapping views of one device buffer: shifting a row by one element.
  const Tensor row = random_host({9}, DType::kFloat32, next_seed());
  Tensor buffer = row.to(gpu(), DType::kFloat32);
  Tensor head = buffer.as_strided({8}, {1}, 0);
  const Tensor tail = buffer.as_strided({8}, {1}, 4);
  const std::vector<double> row_values = host_values(row).values;
  const std::vector<double> expected(row_values.begin() + 1, row_values.end());
  head.copy_from(tail);
  EXPECT_EQ(host_values(head).values, expected);
}

// ---- CUDA graphs ---------------------------------------------------------------------------

TEST(CudaRuntime, AnOpCallCapturedInAGraphReplaysOnNewValues) {
  TILEOPS_REQUIRE_CUDA();
  TestStream s;
  RMSNormFwdOp norm(Shape{4096}, 1e-5);
  FusedAddRMSNormFwdOp fused(1e-5);
  const DType dtype = DType::kBFloat16;
  Tensor x = random_gpu({64, 4096}, dtype, next_seed());
  Tensor residual = random_gpu({64, 4096}, dtype, next_seed());
  Tensor w = random_gpu({4096}, dtype, next_seed());
  Tensor y = poisoned_gpu({64, 4096}, dtype);
  Tensor z = poisoned_gpu({64, 4096}, dtype);
  // Warm-up: entries are built (occupancy queries) outside the capture.
  norm(x, w, {y});
  fused(x, residual, w, {z});
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  norm(x, w, {y});
  fused(x, residual, w, {z});
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  // New values in the captured buffers, then one replay.
  const Tensor new_x = random_host({64, 4096}, dtype, next_seed());
  const Tensor new_residual = random_host({64, 4096}, dtype, next_seed());
  x.copy_from(new_x);
  residual.copy_from(new_residual);
  y.copy_from(poisoned_gpu({64, 4096}, dtype));
  z.copy_from(poisoned_gpu({64, 4096}, dtype));
  const references::Inputs before_norm = host_inputs({x, w});
  const references::Inputs before_fused = host_inputs({x, residual, w});
  ASSERT_EQ(cudaGraphLaunch(exec, s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  expect_matches_reference(norm, before_norm, {x, w}, {y});
  expect_matches_reference(fused, before_fused, {x, residual, w}, {z});
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// ---- Bad input -----------------------------------------------------------------------------

TEST(CudaBadInput, TensorsOnAnotherDeviceIndexThanTheCalls) {
  TILEOPS_REQUIRE_CUDA();
  RMSNormFwdOp op(Shape{256});
  const Tensor x = random_gpu({2, 256}, DType::kFloat32, next_seed());
  const Tensor w0 = random_gpu({256}, DType::kFloat32, next_seed());
  // The same memory described as living on cuda:1: the check refuses before anything reads it.
  const Tensor w1 =
      Tensor::from_blob(w0.data_ptr(), {256}, {1}, DType::kFloat32, Device::cuda(1), w0.storage());
  EXPECT_EQ(error_of<CheckError>([&] { op(x, w1); }),
            "RMSNormFwdOp: needs every tensor on one device; got [x on cuda:0, weight on cuda:1]");
  const Tensor out1 = Tensor::from_blob(x.data_ptr(), {2, 256}, {256, 1}, DType::kFloat32,
                                        Device::cuda(1), x.storage());
  EXPECT_NE(error_of<CheckError>([&] { op(x, w0, {out1}); }).find("out is not on the call device"),
            std::string::npos);
  run_and_check(op, {x, w0});
}

TEST(CudaBadInput, ADeviceIndexThatDoesNotExist) {
  TILEOPS_REQUIRE_CUDA();
  const int missing = cuda::device_count();
  const Tensor real = random_gpu({2, 64}, DType::kFloat32, next_seed());
  const Tensor x = Tensor::from_blob(real.data_ptr(), {2, 64}, {64, 1}, DType::kFloat32,
                                     Device::cuda(missing), real.storage());
  RMSNormFwdOp op(Shape{64});
  EXPECT_EQ(error_of<CheckError>([&] { op(x); }),
            fmt::format("RMSNormFwdOp: x is on cuda:{}, which does not exist: this process sees {} "
                        "CUDA device{}",
                        missing, missing, missing == 1 ? "" : "s"));
  EXPECT_THROW(Tensor::empty({4}, DType::kFloat32, Device::cuda(missing)), CheckError);
  EXPECT_TRUE(op.built_entries("rms_norm").empty());
  run_and_check(op, {real, std::nullopt});  // the instance is still usable
}

TEST(CudaBadInput, AStreamOfAnotherDevice) {
  TILEOPS_REQUIRE_CUDA();
  RMSNormFwdOp op(Shape{64});
  const Stream cpu_stream;
  EXPECT_EQ(error_of<CheckError>([&] {
              op(random_gpu({2, 64}, DType::kFloat32, next_seed()), std::nullopt,
                 CallOptions{std::nullopt, &cpu_stream});
            }),
            "RMSNormFwdOp: the stream is on cpu but the call is on cuda:0");
}

// A provider that reports the device as sm_80 and delegates everything else to the real one.
TEST(CudaBadInput, AnUnsupportedArchitectureIsRefusedWithItsReason) {
  TILEOPS_REQUIRE_CUDA();
  const std::shared_ptr<const AcceleratorProvider> real = accelerator();
  ASSERT_NE(real, nullptr);
  auto older = std::make_shared<AcceleratorProvider>(*real);
  older->facts = [real](int index) {
    DeviceFacts f = real->facts(index);
    f.arch = 80;
    return f;
  };
  install_accelerator(older);
  {
    RMSNormFwdOp op(Shape{1024});
    const Tensor out = poisoned_gpu({2, 1024}, DType::kBFloat16);
    const std::string error = error_of<SelectionError>([&] {
      op(random_gpu({2, 1024}, DType::kBFloat16, next_seed()), std::nullopt, {out});
    });
    EXPECT_NE(error.find("rms_norm_warp_sm90 (RMSNormWarpSm90: built for architectures [90], "
                         "device reports 80)"),
              std::string::npos)
        << error;
    for (double v : host_values(out).values) ASSERT_TRUE(std::isnan(v));
  }
  install_accelerator(real);
}

// Sizes past 32-bit indexing: 2^31 + elements of bfloat16 (4.3 GB), rows repeating a random
// block so that only a few rows need a float64 reference.
TEST(CudaBadInput, SizesPast32BitIndexing) {
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
  const Tensor w = random_gpu({n}, dtype, next_seed());
  const references::Inputs pattern_in = host_inputs({pattern, w});
  const references::Reference reference = references::find_reference("RMSNormFwdOp");
  // The fixed path serves these rows unforced (Note [Fixed rows]); the block path, forced, reads
  // rows of any length with the same 64-bit row offsets.
  for (const char* key : {"rms_norm_fixed_sm90", "rms_norm_block_sm90"}) {
    SCOPED_TRACE(key);
    EnvGuard force("TILEOPS_FORCE", key);
    RMSNormFwdOp op(Shape{n}, 1e-5);
    const Tensor y = op(x, w);
    EXPECT_EQ(only_key(op, "rms_norm"), key);
    // The first block of rows and the last rows, against the reference of the pattern.
    const references::Expected want = reference(op.params(), pattern_in).at(0);
    for (std::int64_t first : {std::int64_t{0}, rows - block}) {
      SCOPED_TRACE(first);
      const Tensor got = y.as_strided({block, n}, {n, 1}, first * n * 2);
      const references::HostTensor h = host_values(got);
      references::Expected shifted = want;
      // Row r holds pattern row r % block.
      for (std::int64_t r = 0; r < block; ++r)
        for (std::int64_t i = 0; i < n; ++i)
          shifted.values[r * n + i] = want.values[((first + r) % block) * n + i];
      const auto tol = references::tolerance(dtype);
      const references::Comparison c = references::compare(h.values, shifted, tol);
      EXPECT_TRUE(c.ok()) << c.str(h.values, shifted.values, tol);
    }
  }
}

// A fault inside a kernel (here: a kernel handed an address no allocation owns) surfaces as a
// CudaError at the next synchronising call; it poisons the CUDA context, so it runs in a child
// process.
TEST(CudaBadInputDeathTest, AFaultInsideAKernelIsACudaError) {
  TILEOPS_REQUIRE_CUDA();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        RMSNormFwdOp op(Shape{1024});
        const auto bogus = reinterpret_cast<void*>(std::uintptr_t{0x1000});  // never mapped
        const Tensor x = Tensor::from_blob(bogus, {64, 1024}, {1024, 1}, DType::kBFloat16, gpu());
        try {
          const Tensor y = op(x);
          y.to(Device::cpu(), y.dtype());
        } catch (const CudaError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          // _Exit: the context is lost, so no destructor should try to free device memory.
          std::_Exit(std::string(e.what()).find("CUDA error at ") == 0 ? 0 : 2);
        }
        std::_Exit(1);
      },
      ::testing::ExitedWithCode(0), "cudaError");
}

// ---- The composite on the GPU, and the elementwise kernels it uses ----------------------------

TEST(CudaComposite, ResidualRMSNormRunsThroughItsSubOpsOnTheGpu) {
  TILEOPS_REQUIRE_CUDA();
  for (DType dtype : kFloatDTypes)
    for (bool weighted : {true, false}) {
      SCOPED_TRACE(fmt::format("{} weight={}", dtype_name(dtype), weighted));
      ResidualRMSNormFwdOp op(Shape{4096}, 1e-5);
      std::optional<Tensor> w;
      if (weighted) w = random_gpu({4096}, dtype, next_seed());
      const CallResult r = run_and_check(op, {random_gpu({9, 4096}, dtype, next_seed()),
                                              random_gpu({9, 4096}, dtype, next_seed()), w});
      EXPECT_EQ(r.at(0)->device(), gpu());
      const auto subs = op.held_delegates();
      ASSERT_EQ(subs.size(), 2u);
      EXPECT_EQ(only_key(*subs[0], "add"), "add_vector_sm90");
      // Rows of 4096 16-bit elements take the fixed path (Note [Fixed rows]).
      EXPECT_EQ(only_key(*subs[1], "rms_norm"),
                dtype == DType::kFloat32 ? "rms_norm_block_sm90" : "rms_norm_fixed_sm90");
    }
}

TEST(CudaElementwise, AddAndMulSameShapeBroadcastAndIntegers) {
  TILEOPS_REQUIRE_CUDA();
  struct Shapes {
    Shape a, b;
  };
  const Shapes shapes[] = {
      {{33, 100}, {33, 100}}, {{33, 100}, {100}}, {{4, 1, 6}, {5, 1}}, {{}, {7}}, {{1001}, {1001}}};
  for (DType dtype :
       {DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kInt32, DType::kInt64})
    for (const Shapes& s : shapes) {
      SCOPED_TRACE(fmt::format("{} {} {}", dtype_name(dtype), s.a.str(), s.b.str()));
      const Value alpha = is_floating(dtype) ? Value(0.5) : Value(std::int64_t{3});
      AddFwdOp add(alpha);
      MulFwdOp mul;
      const Tensor a = random_gpu(s.a, dtype, next_seed(), is_floating(dtype) ? 1.0 : 100.0);
      const Tensor b = random_gpu(s.b, dtype, next_seed(), is_floating(dtype) ? 1.0 : 100.0);
      run_and_check(add, {a, b});
      run_and_check(mul, {a, b});
    }
  // A misaligned same-shape pair takes the general kernel.
  AddFwdOp add;
  const Tensor a = view_at_offset(random_host({1000}, DType::kBFloat16, next_seed()), 2);
  run_and_check(add, {a, random_gpu({1000}, DType::kBFloat16, next_seed())});
  EXPECT_EQ(only_key(add, "add"), "add_general_sm90");
}

}  // namespace
}  // namespace tileops::test_cuda
