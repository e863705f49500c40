#include "core/device_runtime.hpp"

#if TILEOPS_WITH_CUDA
#include "cuda/runtime.hpp"  // the runtime's C++ face: no CUDA header
#endif

namespace tileops::detail {

DeviceRuntime* device_runtime(DeviceType type) {
#if TILEOPS_WITH_CUDA
  if (type == DeviceType::kCUDA) return cuda::core_runtime();
#endif
  (void)type;
  return nullptr;
}

}  // namespace tileops::detail
