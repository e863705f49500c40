// The compile boundary's torch operator kernel, in C++ (Note [The C++ operator kernel]).
//
// Note [The C++ operator kernel]
// Each effect branch of an op class is a torch operator "tileops::<name>(str instance, Tensor...
// inputs[, Tensor(z!) out]) -> (Tensor...)" (python/tileops/_torch.py defines the schema from the
// manifest, and the fake kernel). Its real kernel is a boxed functor (CallKernel) holding the
// operator's branch (how many inputs, whether `out` is passed, which outputs return): it finds
// the instance by its key (owned for the call, Note [Owned instances] in
// include/tileops/op/op.hpp), views each at::Tensor as a library tensor (no copy; the view holds
// the tensor's storage, so that it may outlive the call), runs the instance's call on
// torch's current stream, and returns the outputs the branch returns as at::Tensors that hold the
// library's tensors. Registered from Python, the same kernel paid a Python frame, a weak-dictionary
// lookup and a DLPack round trip per tensor: 10.7 us a call against 4.3 us here on the CPU
// (bench/results/2026-12-01-torch-operator-cpp-vs-python.md).
//
// The library is a separate shared library, libtileops_torch, linked against torch's C++ API and
// the package's libtileops (one copy of the registries in the process); the package loads it
// with torch.ops.load_library when torch is imported and registers each operator's kernel with
// torch.ops.tileops_torch.register_call_kernel. The library's errors reach Python as the builtin
// classes torch maps c10's errors to: CheckError as ValueError, ContractError as TypeError,
// OpNotAvailableError as NotImplementedError, others as RuntimeError, with the library's message.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"
#include "torch_tensors.hpp"

namespace tileops::torch_kernel {
namespace {

// What the kernel of one operator needs to know beyond its schema.
struct Branch {
  std::size_t inputs = 0;             // the entry's inputs, present or not
  bool has_out = false;               // `out` is the last argument
  std::vector<std::size_t> returned;  // indices of the call's outputs the operator returns
};

struct Registry {
  std::mutex mutex;
  std::unordered_set<std::string> operators;  // those with their kernel ("tileops::...")
  std::vector<std::unique_ptr<torch::Library>> libraries;
};

Registry& registry() {
  static Registry r;
  return r;
}

// torch's current stream on the call's CUDA device, as a library stream; nullopt for a CPU call.
std::optional<Stream> torch_stream(const std::vector<std::optional<Tensor>>& inputs,
                                   const std::optional<Tensor>& out) {
  const Tensor* cuda = out && out->device().is_cuda() ? &*out : nullptr;
  for (const std::optional<Tensor>& t : inputs)
    if (cuda == nullptr && t && t->device().is_cuda()) cuda = &*t;
  if (cuda == nullptr) return std::nullopt;
  return Stream(cuda->device(), current_cuda_stream(cuda->device().index));
}

// A written tensor's version counter bumped, as torch's in-place ops do; an inference tensor has
// none.
void bump_version(const at::Tensor& t) {
  if (!t.is_inference()) t.unsafeGetTensorImpl()->bump_version();
}

CallResult run(const Branch& branch, c10::ArrayRef<c10::IValue> args) {
  const c10::string_view key = args[0].toStringView();
  const std::shared_ptr<Op> instance = find_instance(std::string_view(key.data(), key.size()));
  if (instance == nullptr)
    C10_THROW_ERROR(Error, "tileops: no live op instance has the key " +
                               std::string(key.data(), key.size()) +
                               ": it was destroyed, or it is not owned by a std::shared_ptr");
  std::vector<std::optional<Tensor>> inputs;
  inputs.reserve(branch.inputs);
  for (std::size_t i = 0; i < branch.inputs; ++i) {
    const c10::IValue& a = args[1 + i];
    inputs.push_back(a.isNone() ? std::nullopt : std::optional<Tensor>(view_of(a.toTensor())));
  }
  CallOptions options;
  if (branch.has_out) options.out = view_of(args[1 + branch.inputs].toTensor());
  const std::optional<Stream> stream = torch_stream(inputs, options.out);
  if (stream) options.stream = &*stream;
  try {
    CallResult result = instance->call(inputs, options);
    // The tensors it wrote, marked as changed as torch's in-place ops mark theirs (their version
    // counters), so that autograd refuses a backward through a value saved before the write.
    const auto& declared = instance->op_class().entry().inputs;
    for (std::size_t i = 0; i < branch.inputs && i < declared.size(); ++i)
      if (declared[i].may_be_written() && args[1 + i].isTensor())
        bump_version(args[1 + i].toTensor());
    if (branch.has_out) bump_version(args[1 + branch.inputs].toTensor());
    return result;
  } catch (const CheckError& e) {
    C10_THROW_ERROR(ValueError, e.what());
  } catch (const ContractError& e) {
    C10_THROW_ERROR(TypeError, e.what());
  } catch (const OpNotAvailableError& e) {
    C10_THROW_ERROR(NotImplementedError, e.what());
  } catch (const c10::Error&) {
    throw;  // already torch's (a Python target's exception, say)
  } catch (const std::exception& e) {
    C10_THROW_ERROR(Error, e.what());  // the library's other errors, std::bad_alloc, ...
  }
}

// The real kernel of one operator, its branch fixed at registration: a call reads no registry.
class CallKernel final : public c10::OperatorKernel {
 public:
  explicit CallKernel(Branch branch) : branch_(std::move(branch)) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/,
                  torch::jit::Stack* stack) const {
    const std::size_t n = 1 + branch_.inputs + (branch_.has_out ? 1 : 0);
    const CallResult results = run(branch_, torch::jit::last(*stack, n));
    torch::jit::drop(*stack, n);
    for (std::size_t i : branch_.returned) {
      TORCH_CHECK(i < results.size() && results[i], "tileops: ", op.schema().name(),
                  " produced no output ", i);
      torch::jit::push(*stack, torch_of(*results[i]));
    }
  }

 private:
  Branch branch_;
};

// Makes a CallKernel the real kernel of operator tileops::`name`, already defined (from Python).
void register_call_kernel(std::string name, std::vector<std::int64_t> returned, std::int64_t inputs,
                          bool has_out) {
  Branch branch;
  branch.inputs = static_cast<std::size_t>(inputs);
  branch.has_out = has_out;
  for (std::int64_t i : returned) branch.returned.push_back(static_cast<std::size_t>(i));
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const std::string qualified = "tileops::" + name;
  TORCH_CHECK(r.operators.insert(qualified).second, "tileops: operator ", qualified,
              " already has its kernel");
  auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "tileops",
                                                  c10::DispatchKey::CompositeExplicitAutograd,
                                                  __FILE__, __LINE__);
  library->impl(name.c_str(),
                torch::CppFunction::makeFromBoxedFunctor(std::make_unique<CallKernel>(branch)));
  r.libraries.push_back(std::move(library));
}

}  // namespace
}  // namespace tileops::torch_kernel

TORCH_LIBRARY(tileops_torch, m) {
  m.def("register_call_kernel(str name, int[] returned, int inputs, bool has_out) -> ()",
        &tileops::torch_kernel::register_call_kernel);
}
