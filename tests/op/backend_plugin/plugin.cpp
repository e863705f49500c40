// A shared-library backend for the op framework tests (test_backend_plugin.cpp). One source,
// built several times; TILEOPS_PLUGIN_KIND picks what the library does:
//   0 "good":      target plugin_target (detector claiming cuda:21) with a builder for
//                  PluginToyFwdOp whose kernel fills a float32 output with 42;
//   1 "wrong ABI": stages a detector, then refuses: it was built for another ABI version;
//   2 "colliding": stages a builder for a new target, then a detector that the test has already
//                  registered in-process, so publication fails and neither is registered;
//   3 "env":       target env_plugin_target, loaded through TILEOPS_BACKENDS;
//   4 "no symbol": exports no registration function.
#include "tileops/core/tensor.hpp"
#include "tileops/op/backend.hpp"

#ifndef TILEOPS_PLUGIN_KIND
#error "TILEOPS_PLUGIN_KIND must be defined"
#endif

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

}  // namespace

#if TILEOPS_PLUGIN_KIND != 4
extern "C" __attribute__((visibility("default"))) int tileops_backend_register(
    tileops::BackendRegistrar* registrar, int abi_version) {
#if TILEOPS_PLUGIN_KIND == 0
  if (abi_version != tileops::kBackendAbiVersion) return 1;
  registrar->detector("plugin_target",
                      [](const tileops::Device& d) { return d == tileops::Device::cuda(21); });
  registrar->kernel_builder("PluginToyFwdOp", "plugin_target", fill_builder(42.0f));
#elif TILEOPS_PLUGIN_KIND == 1
  registrar->detector("wrong_abi_target", [](const tileops::Device&) { return false; });
  if (abi_version != tileops::kBackendAbiVersion + 1) return 1;
#elif TILEOPS_PLUGIN_KIND == 2
  if (abi_version != tileops::kBackendAbiVersion) return 1;
  registrar->kernel_builder("PluginToyFwdOp", "collide_new_target", fill_builder(1.0f));
  registrar->detector("collide_existing_target", [](const tileops::Device&) { return false; });
#elif TILEOPS_PLUGIN_KIND == 3
  if (abi_version != tileops::kBackendAbiVersion) return 1;
  registrar->detector("env_plugin_target", [](const tileops::Device&) { return false; });
  registrar->kernel_builder("EnvPluginFwdOp", "env_plugin_target", fill_builder(7.0f));
#endif
  return 0;
}
#else
extern "C" __attribute__((visibility("default"))) int tileops_backend_something_else() { return 0; }
#endif
