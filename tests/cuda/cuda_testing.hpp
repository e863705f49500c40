// Helpers of the GPU tests (ctest label `cuda`, CUDA builds only): the GPU requirement, random
// inputs on the device, poisoned outputs, views at chosen offsets, and the check of a call against
// the float64 references (references/).
//
// Every test starts with TILEOPS_REQUIRE_CUDA(): without a CUDA device it skips, unless
// TILEOPS_REQUIRE_GPU=1 is set (scripts/gpu-check sets it), and then it fails.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/env_guard.hpp"
#include "common/test_helpers.hpp"
#include "cuda/kernel_checks.hpp"
#include "cuda/runtime.hpp"
#include "references.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"

namespace tileops::test_cuda {

inline bool gpu_required() {
  const char* v = std::getenv("TILEOPS_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

inline bool gpu_present() { return cuda::device_count() > 0; }

#define TILEOPS_REQUIRE_CUDA()                                                               \
  do {                                                                                       \
    if (!::tileops::test_cuda::gpu_present()) {                                              \
      if (::tileops::test_cuda::gpu_required()) {                                            \
        FAIL() << "TILEOPS_REQUIRE_GPU is set but this process sees no CUDA device";         \
      } else {                                                                               \
        GTEST_SKIP() << "no CUDA device (set TILEOPS_REQUIRE_GPU=1 to make this a failure)"; \
      }                                                                                      \
    }                                                                                        \
  } while (false)

inline Device gpu() { return Device::cuda(0); }

inline const DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

// Standard normal values, never zero once rounded to `dtype` (zeros hide unwritten outputs).
inline Tensor random_host(const Shape& shape, DType dtype, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Tensor t = Tensor::empty(shape, dtype);
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    double v = 0.0;
    do v = normal(rng);
    while (references::round_to(dtype, v) == 0.0);
    store_from_double(dtype, v, bytes + static_cast<std::size_t>(i) * t.itemsize());
  }
  return t;
}

inline Tensor random_gpu(const Shape& shape, DType dtype, std::uint64_t seed, double scale = 1.0) {
  return random_host(shape, dtype, seed, scale).to(gpu(), dtype);
}

// A device tensor whose every byte is 0xFF (NaN in every float dtype): an element a kernel fails
// to write stays NaN, which no comparison passes.
inline Tensor poisoned_gpu(const Shape& shape, DType dtype) {
  Tensor host = Tensor::empty(shape, dtype);
  if (host.nbytes() > 0) std::memset(host.data_ptr(), 0xFF, host.nbytes());
  return host.to(gpu(), dtype);
}

// A contiguous view of `shape` at `byte_offset` into a fresh device buffer holding `values`' data
// (a copy of it), to build misaligned pointers.
inline Tensor view_at_offset(const Tensor& values, std::int64_t byte_offset) {
  const std::int64_t extra = (byte_offset + 16) / static_cast<std::int64_t>(values.itemsize()) + 1;
  Tensor base = Tensor::empty(Shape{values.numel() + extra}, values.dtype(), gpu());
  Tensor view = base.as_strided(values.shape(), contiguous_strides(values.shape()), byte_offset);
  view.copy_from(values.device().is_cpu() ? values.to(gpu(), values.dtype()) : values);
  return view;
}

inline references::HostTensor host_values(const Tensor& t) {
  return references::to_host(t.device().is_cpu() ? t : t.to(Device::cpu(), t.dtype()));
}

inline references::Inputs host_inputs(const std::vector<std::optional<Tensor>>& inputs) {
  references::Inputs out;
  for (const auto& t : inputs)
    out.push_back(t ? std::optional<references::HostTensor>(host_values(*t)) : std::nullopt);
  return out;
}

// Checks the outputs (`results`, in signature order) and the written inputs of one call of `op`
// against the op's float64 reference, computed from `before` (the inputs as they were before
// the call).
inline void expect_matches_reference(const Op& op, const references::Inputs& before,
                                     const std::vector<std::optional<Tensor>>& inputs,
                                     const CallResult& results) {
  const references::Reference reference = references::find_reference(op.name());
  ASSERT_NE(reference, nullptr) << op.name();
  const manifest::Entry& entry = op.op_class().entry();
  for (const references::Expected& e : reference(op.params(), before)) {
    const Tensor* got = nullptr;
    for (std::size_t o = 0; o < entry.outputs.size() && o < results.size(); ++o)
      if (entry.outputs[o].name == e.name && results[o]) got = &*results[o];
    for (std::size_t i = 0; i < entry.inputs.size() && !got; ++i)
      if (entry.inputs[i].name == e.name && inputs[i]) got = &*inputs[i];
    ASSERT_NE(got, nullptr) << "no tensor named " << e.name;
    const references::HostTensor actual = host_values(*got);
    const references::Tolerance tol = references::tolerance(actual.dtype);
    const references::Comparison c = references::compare(actual.values, e, tol);
    EXPECT_TRUE(c.ok()) << op.name() << " " << e.name << " " << actual.shape.str() << ": "
                        << c.str(actual.values, e.values, tol);
    EXPECT_EQ(c.checked, e.values.size());
  }
}

// Runs `op` on `inputs` (optionally into `out`) and checks it against the reference.
inline CallResult run_and_check(Op& op, const std::vector<std::optional<Tensor>>& inputs,
                                const CallOptions& options = {}) {
  const references::Inputs before = host_inputs(inputs);
  CallResult results = op.call(inputs, options);
  expect_matches_reference(op, before, inputs, results);
  return results;
}

// The key of the one entry `op` built under `interface` ("" unless exactly one).
inline std::string only_key(const Op& op, std::string_view interface) {
  const std::vector<BuiltEntry> built = op.built_entries(interface);
  return built.size() == 1 ? built[0].key : std::string();
}

// Shared with the other suites (tests/common/).
using test_common::EnvGuard;
using test_common::error_of;

// The checking mode on for the guard's lifetime (TILEOPS_CHECK_KERNELS=1), then as before.
class CheckingMode {
 public:
  CheckingMode() : env_(std::in_place, "TILEOPS_CHECK_KERNELS", "1") {
    cuda::reload_kernel_checks_setting();
  }
  ~CheckingMode() {
    env_.reset();
    cuda::reload_kernel_checks_setting();
  }
  CheckingMode(const CheckingMode&) = delete;
  CheckingMode& operator=(const CheckingMode&) = delete;

 private:
  std::optional<EnvGuard> env_;
};

// `calls` captured once on `stream` into an instantiated CUDA graph, after one run outside the
// capture (the ops build their entries there, which a capture must not see); destroyed with the
// object. A failure to capture is a test failure, and `replay` then does nothing.
class CapturedCalls {
 public:
  CapturedCalls(cudaStream_t stream, const std::function<void()>& calls) : stream_(stream) {
    calls();
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    calls();
    EXPECT_EQ(cudaStreamEndCapture(stream, &graph_), cudaSuccess);
    if (graph_ != nullptr) {
      EXPECT_EQ(cudaGraphInstantiate(&exec_, graph_, 0), cudaSuccess);
    }
  }
  ~CapturedCalls() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
  }
  CapturedCalls(const CapturedCalls&) = delete;
  CapturedCalls& operator=(const CapturedCalls&) = delete;

  // Launches the graph and waits for it.
  void replay() {
    ASSERT_NE(exec_, nullptr);
    ASSERT_EQ(cudaGraphLaunch(exec_, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }

 private:
  cudaStream_t stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace tileops::test_cuda
