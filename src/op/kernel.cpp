#include "tileops/op/kernel.hpp"

#include "tileops/op/accelerator.hpp"

namespace tileops {

// Note [Tuning on the entry's device]
// Building an entry runs with its call spec's device current (build_entry's guard); tuning must too
// (docs/seeds.md, construction-and-calls §5), and a tuning request can come long after the build,
// from a thread whose current device is another. The framework records the device when it builds
// the entry through its KernelType (KernelType::of), and the request makes it current around the
// kernel's own on_tune_request. A target's kernel gets the same from run_target's wrapper.
void Kernel::request_tune() {
  if (tune_requested_.exchange(true)) return;
  const CurrentDeviceGuard on_device(device_);
  on_tune_request();
}

}  // namespace tileops
