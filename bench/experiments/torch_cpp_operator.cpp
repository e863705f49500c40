// An experiment, not part of the library: the compile boundary's torch operator registered from
// C++ (TORCH_LIBRARY) instead of Python (torch.library, python/tileops/_torch.py), to measure what
// a call through the operator costs each way. One boxed kernel serves any operator whose schema is
// the compile boundary's "(str key, Tensor... inputs, Tensor(z!) out) -> ()": it finds the
// instance by its key, views the at::Tensors as tileops tensors (no copy, no DLPack capsule) and
// runs the instance's call. Built and timed by torch_cpp_operator.py beside it. The package's
// kernel grew from it: python/torch_kernel/call_kernel.cpp.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"

namespace {

tileops::DType dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return tileops::DType::kFloat32;
    case at::kBFloat16:
      return tileops::DType::kBFloat16;
    case at::kHalf:
      return tileops::DType::kFloat16;
    case at::kDouble:
      return tileops::DType::kFloat64;
    default:
      TORCH_CHECK(false, "tileops_cpp: dtype ", type, " is not one of the experiment's");
  }
}

// A view of `t` that keeps its storage alive (the call's record may outlive the call).
tileops::Tensor view_of(const at::Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const tileops::Shape shape(std::span<const std::int64_t>(sizes.data(), sizes.size()));
  const tileops::Shape steps(std::span<const std::int64_t>(strides.data(), strides.size()));
  const tileops::Device device =
      t.is_cuda() ? tileops::Device::cuda(t.get_device()) : tileops::Device::cpu();
  auto owner = std::make_shared<at::Tensor>(t);
  return tileops::Tensor::from_blob(t.data_ptr(), shape, steps, dtype_of(t.scalar_type()), device,
                                    std::move(owner));
}

void call_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::size_t n = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, n);
  const c10::string_view key = args[0].toStringView();
  const std::shared_ptr<tileops::Op> instance =
      tileops::find_instance(std::string_view(key.data(), key.size()));
  TORCH_CHECK(instance != nullptr, "tileops_cpp: no op instance has the key ", key);
  std::vector<std::optional<tileops::Tensor>> inputs;
  inputs.reserve(n - 2);
  for (std::size_t i = 1; i + 1 < n; ++i)
    inputs.push_back(args[i].isNone()
                         ? std::nullopt
                         : std::optional<tileops::Tensor>(view_of(args[i].toTensor())));
  tileops::CallOptions options;
  options.out = view_of(args[n - 1].toTensor());
  instance->call(inputs, options);
  torch::jit::drop(*stack, n);
}

}  // namespace

TORCH_LIBRARY(tileops_cpp, m) {
  m.def("norm_rms_norm_fwd_out(str key, Tensor x, Tensor? weight, Tensor(z!) out) -> ()");
  m.impl("norm_rms_norm_fwd_out", c10::DispatchKey::CompositeExplicitAutograd,
         torch::CppFunction::makeFromBoxedFunction<&call_boxed>());
}
