// A shared-library backend for the op framework tests (test_backend_plugin.cpp). One source,
// built once per behaviour; tests/CMakeLists.txt defines TILEOPS_PLUGIN_<KIND> for each:
//   GOOD:        target plugin_target (detector claiming cuda:21) with a builder for
//                PluginToyFwdOp whose kernel fills a float32 output with 42;
//   REFUSING:    stages a detector, then returns non-zero;
//   OTHER_ABI:   declares another ABI version; its registration would register a target;
//   THROWS:      stages a detector, then throws an exception that is not a std::exception;
//   COLLIDING:   stages a builder for a new target, then a detector that the test has already
//                registered in-process, so publication fails and neither is registered;
//   ENV:         target env_plugin_target, loaded through TILEOPS_BACKENDS;
//   NO_SYMBOL:   declares its version but exports no registration function;
//   UNVERSIONED: exports a registration function but declares no ABI version.
#include "tileops/core/tensor.hpp"
#include "tileops/op/backend.hpp"

namespace {

[[maybe_unused]] tileops::KernelBuilder fill_builder(float value) {
  return [value](std::span<const std::optional<tileops::TensorSpec>> inputs,
                 const tileops::ParamMap&) {
    const tileops::TensorSpec x = *inputs[0];
    tileops::TargetKernel k;
    k.run = [value, x](const tileops::TargetCall& c) -> tileops::CallResult {
      tileops::Tensor y =
          c.out ? *c.out : tileops::Tensor::empty(x.shape, x.dtype, x.device, c.stream);
      if (y.dtype() == tileops::DType::kFloat32)
        for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = value;
      return {y};
    };
    return k;
  };
}

// What the THROWS plugin throws: a type of the plugin's own, outside std::exception.
struct [[maybe_unused]] PluginFailure {
  int code = 7;
};

}  // namespace

#if !defined(TILEOPS_PLUGIN_UNVERSIONED)
extern "C" __attribute__((visibility("default"))) const int tileops_backend_abi_version =
#if defined(TILEOPS_PLUGIN_OTHER_ABI)
    tileops::kBackendAbiVersion + 1;
#else
    tileops::kBackendAbiVersion;
#endif
#endif

#if !defined(TILEOPS_PLUGIN_NO_SYMBOL)
extern "C" __attribute__((visibility("default"))) int tileops_backend_register(
    tileops::BackendRegistrar* registrar, int abi_version) {
  if (abi_version != tileops::kBackendAbiVersion) return 1;
#if defined(TILEOPS_PLUGIN_GOOD)
  registrar->detector("plugin_target",
                      [](const tileops::Device& d) { return d == tileops::Device::cuda(21); });
  registrar->kernel_builder("PluginToyFwdOp", "plugin_target", fill_builder(42.0f));
#elif defined(TILEOPS_PLUGIN_REFUSING)
  registrar->detector("refusing_target", [](const tileops::Device&) { return false; });
  return 1;
#elif defined(TILEOPS_PLUGIN_OTHER_ABI)
  registrar->detector("other_abi_target", [](const tileops::Device&) { return false; });
#elif defined(TILEOPS_PLUGIN_THROWS)
  registrar->detector("throwing_target", [](const tileops::Device&) { return false; });
  throw PluginFailure{};
#elif defined(TILEOPS_PLUGIN_COLLIDING)
  registrar->kernel_builder("PluginToyFwdOp", "collide_new_target", fill_builder(1.0f));
  registrar->detector("collide_existing_target", [](const tileops::Device&) { return false; });
#elif defined(TILEOPS_PLUGIN_ENV)
  registrar->detector("env_plugin_target", [](const tileops::Device&) { return false; });
  registrar->kernel_builder("EnvPluginFwdOp", "env_plugin_target", fill_builder(7.0f));
#elif defined(TILEOPS_PLUGIN_UNVERSIONED)
  registrar->detector("unversioned_target", [](const tileops::Device&) { return false; });
#endif
  return 0;
}
#endif
