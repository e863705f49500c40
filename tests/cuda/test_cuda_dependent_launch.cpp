// Programmatic dependent launch (Note [Dependent launch] in src/cuda/dependent_launch.hpp) on the
// GPU: calls chained on one stream, each launched before the one it depends on has finished,
// still read every value the call before wrote and never overwrite a tensor the call before still
// reads; a captured graph keeps the overlap as a programmatic edge, and TILEOPS_PDL=0 turns it off.
// A single row makes the race this guards against likely to show: the next call's one block is
// placed while the previous call's one block still works on the same row.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "cuda/dependent_launch.hpp"
#include "cuda_testing.hpp"
#include "test_stream.hpp"
#include "tileops/ops/activation.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/norm.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::test_cuda {
namespace {

std::uint64_t next_seed() {
  static std::uint64_t seed = 31000;
  return seed++;
}

// One call of a chain: checked against the reference once the stream has finished. `before`
// holds the inputs the call reads that a later call of the chain overwrites (taken before the
// chain runs); the others are read back after it.
struct ChainedCall {
  Op* op;
  std::vector<std::optional<Tensor>> inputs;
  CallResult results;
  std::optional<references::Inputs> before;
};

using TensorList = std::vector<std::optional<Tensor>>;

CallResult call_into(Op& op, const TensorList& inputs, const Tensor& out) {
  return op.call(inputs, CallOptions{out});
}

void check_calls(const std::vector<ChainedCall>& calls) {
  for (std::size_t k = 0; k < calls.size(); ++k) {
    SCOPED_TRACE(fmt::format("call {} ({})", k, calls[k].op->name()));
    const references::Inputs before =
        calls[k].before ? *calls[k].before : host_inputs(calls[k].inputs);
    expect_matches_reference(*calls[k].op, before, calls[k].inputs, calls[k].results);
  }
}

// TILEOPS_PDL set for the guard's lifetime, then as before.
class DependentLaunchSetting {
 public:
  explicit DependentLaunchSetting(const char* value) : env_(std::in_place, "TILEOPS_PDL", value) {
    cuda::reload_dependent_launch_setting();
  }
  ~DependentLaunchSetting() {
    env_.reset();
    cuda::reload_dependent_launch_setting();
  }
  DependentLaunchSetting(const DependentLaunchSetting&) = delete;
  DependentLaunchSetting& operator=(const DependentLaunchSetting&) = delete;

 private:
  std::optional<EnvGuard> env_;
};

TEST(CudaDependentLaunch, ChainedCallsReadWhatTheCallBeforeWrote) {
  TILEOPS_REQUIRE_CUDA();
  const DependentLaunchSetting pdl("1");
  const DType dtype = DType::kBFloat16;
  const std::int64_t many = 2 * device_facts(gpu()).sm_count + 7;
  for (const Shape& shape : {Shape{1, 4096}, Shape{3, 8192}, Shape{4, 128256}, Shape{many, 4096}}) {
    SCOPED_TRACE(shape.str());
    const std::int64_t n = shape[1];
    TestStream stream;
    RMSNormFwdOp rms(Shape{n}, 1e-5);
    LayerNormFwdOp layer(Shape{n}, 1e-5);
    FusedAddRMSNormFwdOp fused(1e-5);
    SoftmaxFwdOp softmax;
    AddFwdOp add;
    SiluFwdOp silu;
    const Tensor w = random_gpu({n}, dtype, next_seed());
    const Tensor b = random_gpu({n}, dtype, next_seed());
    // Every buffer is made (and poisoned) before the chain, so nothing synchronises inside it.
    std::vector<Tensor> y;
    for (int k = 0; k < 14; ++k) y.push_back(poisoned_gpu(shape, dtype));
    const std::vector<Tensor> residuals = {random_gpu(shape, dtype, next_seed()),
                                           random_gpu(shape, dtype, next_seed())};
    // The fused calls write their residual in place: the values before are the uploaded ones.
    std::vector<references::Inputs> residual_before;
    for (const Tensor& r : residuals) residual_before.push_back(host_inputs({std::nullopt, r, w}));
    Tensor x = random_gpu(shape, dtype, next_seed(), 3.0);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);

    std::vector<ChainedCall> calls;
    auto call = [&](Op& op, std::vector<std::optional<Tensor>> inputs, const Tensor& out,
                    std::optional<references::Inputs> before = std::nullopt) {
      CallResult results = op.call(inputs, CallOptions{out});
      calls.push_back({&op, std::move(inputs), std::move(results), std::move(before)});
    };
    Tensor last = x;
    for (int round = 0; round < 2; ++round) {
      Tensor* out = &y[static_cast<std::size_t>(7 * round)];
      const Tensor& residual = residuals[static_cast<std::size_t>(round)];
      call(rms, {last, w}, out[0]);
      call(softmax, {out[0]}, out[1]);
      call(add, {out[1], out[0]}, out[2]);
      call(silu, {out[2]}, out[3]);
      call(layer, {out[3], w, b}, out[4]);
      call(fused, {out[4], residual, w}, out[5], residual_before[static_cast<std::size_t>(round)]);
      call(rms, {residual, w}, out[6]);  // reads the residual the call before wrote
      last = out[6];
    }
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    // The fused calls' x is read back now (no later call writes it).
    for (ChainedCall& c : calls)
      if (c.before) (*c.before)[0] = host_values(*c.inputs[0]);
    check_calls(calls);
  }
}

TEST(CudaDependentLaunch, ACallNeverOverwritesWhatTheCallBeforeStillReads) {
  TILEOPS_REQUIRE_CUDA();
  const DependentLaunchSetting pdl("1");
  const DType dtype = DType::kBFloat16;
  for (const Shape& shape : {Shape{1, 4096}, Shape{1, 128256}, Shape{64, 8192}}) {
    SCOPED_TRACE(shape.str());
    const std::int64_t n = shape[1];
    TestStream stream;
    SoftmaxFwdOp softmax;
    RMSNormFwdOp rms(Shape{n}, 1e-5);
    AddFwdOp add;
    SiluFwdOp silu;
    const Tensor w = random_gpu({n}, dtype, next_seed());
    std::vector<ChainedCall> calls;
    // Each pair: a call reads p, the next writes p (from q).
    for (int pair = 0; pair < 4; ++pair) {
      const Tensor p = random_gpu(shape, dtype, next_seed(), 2.0);
      const Tensor q = random_gpu(shape, dtype, next_seed(), 2.0);
      const Tensor read_out = poisoned_gpu(shape, dtype);
      const bool softmax_pair = pair % 2 == 0;
      const std::vector<std::optional<Tensor>> reader_inputs =
          softmax_pair ? std::vector<std::optional<Tensor>>{p}
                       : std::vector<std::optional<Tensor>>{p, p};
      references::Inputs before = host_inputs(reader_inputs);
      ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
      Op& reader = softmax_pair ? static_cast<Op&>(softmax) : static_cast<Op&>(add);
      CallResult read = reader.call(reader_inputs, CallOptions{read_out});
      calls.push_back({&reader, reader_inputs, std::move(read), std::move(before)});
      if (softmax_pair) {
        CallResult written = call_into(rms, {q, w}, p);
        calls.push_back({&rms, {q, w}, std::move(written), std::nullopt});
      } else {
        CallResult written = call_into(silu, {q}, p);
        calls.push_back({&silu, {q}, std::move(written), std::nullopt});
      }
    }
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    check_calls(calls);
  }
}

// The edges of a graph captured from two chained calls: one, programmatic when dependent launch
// is on, an ordinary one with TILEOPS_PDL=0; the replay is right either way.
TEST(CudaDependentLaunch, ACapturedChainKeepsAProgrammaticEdgeUnlessTurnedOff) {
  TILEOPS_REQUIRE_CUDA();
  for (const char* setting : {"1", "0"}) {
    SCOPED_TRACE(fmt::format("TILEOPS_PDL={}", setting));
    const DependentLaunchSetting pdl(setting);
    TestStream stream;
    const DType dtype = DType::kBFloat16;
    RMSNormFwdOp first(Shape{4096}, 1e-5), second(Shape{4096}, 1e-5);
    const Tensor x = random_gpu({1, 4096}, dtype, next_seed(), 3.0);
    const Tensor w = random_gpu({4096}, dtype, next_seed());
    Tensor y = poisoned_gpu({1, 4096}, dtype);
    Tensor z = poisoned_gpu({1, 4096}, dtype);
    call_into(first, {x, w}, y);  // entries are built outside the capture
    call_into(second, {y, w}, z);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    y.copy_from(poisoned_gpu({1, 4096}, dtype));
    z.copy_from(poisoned_gpu({1, 4096}, dtype));

    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const CallResult y_result = call_into(first, {x, w}, y);
    const CallResult z_result = call_into(second, {y, w}, z);
    ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
    std::size_t edges = 0;
    ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), cudaSuccess);
    ASSERT_EQ(edges, 1u);
    cudaGraphNode_t from = nullptr, to = nullptr;
    cudaGraphEdgeData data{};
    ASSERT_EQ(cudaGraphGetEdges(graph, &from, &to, &data, &edges), cudaSuccess);
    EXPECT_EQ(data.type, std::string(setting) == "1" ? cudaGraphDependencyTypeProgrammatic
                                                     : cudaGraphDependencyTypeDefault);

    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    expect_matches_reference(first, host_inputs({x, w}), {x, w}, y_result);
    expect_matches_reference(second, host_inputs({y, w}), {y, w}, z_result);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

}  // namespace
}  // namespace tileops::test_cuda
