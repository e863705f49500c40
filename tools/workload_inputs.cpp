#include "workload_inputs.hpp"

#include "tileops/op/accelerator.hpp"

namespace tileops::cli {

Device choose_device() {
  if (std::optional<Device> current = current_accelerator_device()) return *current;
  return Device::cpu();
}

}  // namespace tileops::cli
