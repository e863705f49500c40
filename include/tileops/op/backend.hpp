// Backends (docs/seeds.md, construction-and-calls Table 4): a backend joins either by adding an
// implementation to an op's kernel interface (register_kernel_type), or as a target that serves
// whole ops (register_detector + register_kernel_builder). Shared-library backends export two C
// symbols, `tileops_backend_abi_version` and `tileops_backend_register`, and register
// all-or-nothing (load_backend).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tileops/core/small_vector.hpp"
#include "tileops/core/stream.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/tensor_spec.hpp"
#include "tileops/core/value.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/target.hpp"

namespace tileops {

// An op's outputs in signature order. Inline for up to four: building it allocates nothing.
using CallResult = SmallVector<std::optional<Tensor>, 4>;

// What a target's kernel is called with: the inputs in signature order (unwritten ones
// contiguous), the out buffer when passed, and the stream of the call.
struct TargetCall {
  std::span<const std::optional<Tensor>> inputs;
  const Tensor* out = nullptr;
  const Stream* stream = nullptr;
  // The op's construction-time tensors, on the call device with the call's dtypes.
  std::span<const std::optional<Tensor>> ctor_tensors = {};
};

// A kernel a target built. `run` returns the outputs in signature order; `request_tune` may be
// empty (the op then warns once when tuning is requested).
struct TargetKernel {
  std::function<CallResult(const TargetCall&)> run;
  std::function<void()> request_tune;
};

// A target's builder for one op: TensorSpecs in signature order (nullopt for an omitted optional
// input) and the instance's params by manifest name.
using KernelBuilder = std::function<TargetKernel(std::span<const std::optional<TensorSpec>> inputs,
                                                 const ParamMap& params)>;

// A detector claims the devices its target serves; it must be cheap and must not throw.
using Detector = std::function<bool(const Device&)>;

void register_detector(const std::string& target, Detector detect);
void register_kernel_builder(const std::string& op, const std::string& target, KernelBuilder build);
// Adds an implementation to `op`'s interfaces; instances constructed afterwards install it.
void register_kernel_type(const std::string& op, KernelType type);

// The process default target: validated when set (UnknownTargetError for an unknown name);
// nullopt restores detection; BUILTIN disables substitution.
void set_default_target(std::optional<Target> target);
std::optional<Target> default_target();

// Targets known to the registry (detectors and builders), or those with a builder for `op`.
std::vector<std::string> registered_targets(const std::optional<std::string>& op = std::nullopt);
// Why backends failed to load, one line each.
std::vector<std::string> load_failures();

// Loads a shared-library backend: dlopen, read its `tileops_backend_abi_version` (refused unless
// it is kBackendAbiVersion, before any of its code runs), then call
// `tileops_backend_register(registrar, abi)`. Registration is all-or-nothing: a failure (a missing
// symbol, another ABI version, a non-zero return, any exception, a registration that collides with
// the registry) registers nothing, unloads the library again, is recorded in load_failures() and
// is thrown as BackendError. TILEOPS_BACKENDS (paths separated by ':') is loaded once, at the
// first op construction.
void load_backend(const std::string& path);

// Note [Backend ABI version]: a shared-library backend is compiled against these headers and runs
// against the tileops already loaded in the process, exchanging C++ objects by layout and virtual
// calls with no further check. kBackendAbiVersion names that contract; a change to any of these
// bumps it:
//   - the loader's protocol: the two exported symbols and their types (below);
//   - BackendRegistrar, Detector, KernelBuilder, TargetKernel and TargetCall (this header);
//   - every kernel interface: KernelInterface, Kernel (its tuning hooks and the device it
//     records), each interface's virtual functions and call spec type (CallSpecBase,
//     DeviceFacts, each `Call`), KernelType, EntryRecipe and Identity (op/kernel.hpp,
//     op/identity.hpp, kernels/<family>/interface.hpp);
//   - the kernel context: what a kernel is handed or reads around a call (Tensor, Storage, Shape,
//     Device, DType, Stream, TensorSpec, Value and ParamMap, the accelerator provider and
//     allocators) and the error types a kernel may throw.
// The library reads the version a backend declares and refuses any other before calling it.
inline constexpr int kBackendAbiVersion = 3;

// What a shared-library backend registers through. Its methods stage the registrations; they
// are published together when the registration function returns 0.
class BackendRegistrar {
 public:
  virtual ~BackendRegistrar() = default;
  virtual void detector(const std::string& target, Detector detect) = 0;
  virtual void kernel_builder(const std::string& op, const std::string& target,
                              KernelBuilder build) = 0;
  virtual void kernel_type(const std::string& op, KernelType type) = 0;
};

}  // namespace tileops

// The symbols a shared-library backend exports (Note [Backend ABI version]):
//   extern "C" const int tileops_backend_abi_version = tileops::kBackendAbiVersion;
//   extern "C" int tileops_backend_register(tileops::BackendRegistrar*, int abi_version);
// The version is read before registration; registration returns 0 on success.
extern "C" {
extern const int tileops_backend_abi_version;
using tileops_backend_register_fn = int (*)(tileops::BackendRegistrar* registrar, int abi_version);
}
