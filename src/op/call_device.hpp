// Note [Call device scope]
// A call on an accelerator device runs, from the end of its signature check to its return, with
//   - its device checked against the devices the process has (a tensor on cuda:3 of a one-GPU
//     machine fails naming the tensor, before any kernel or copy touches it);
//   - its device current (a call on cuda:1 runs with cuda:1 current, restored after), so that
//     every allocation, copy and launch of the call, sub-ops' included, lands on it;
//   - its stream resolved to a real handle (the caller's, the thread's current one, or the
//     device's default stream for the null handle) and made the device's current stream, so that
//     the copies forward() makes (contiguous inputs) and the composites' sub-op calls are ordered
//     on the stream the kernels use.
// A call on the CPU, meta or an undecided device pays one branch.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "tileops/core/stream.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/signature_call.hpp"
#include "tileops/op/accelerator.hpp"

namespace tileops::detail {

class CallDeviceScope {
 public:
  CallDeviceScope(const std::string& op, const manifest::SignatureCall& call, TensorRefs inputs,
                  const Stream* given) {
    const std::optional<Device> device = call.device();
    if (device && device->type == DeviceType::kCUDA) {
      enter_accelerator(op, call, inputs, given, *device);
      return;
    }
    stream_ = given ? *given : current_stream(device.value_or(Device::cpu()));
  }
  ~CallDeviceScope() {
    if (entered_) leave_accelerator();
  }
  CallDeviceScope(const CallDeviceScope&) = delete;
  CallDeviceScope& operator=(const CallDeviceScope&) = delete;

  const Stream& stream() const noexcept { return stream_; }

 private:
  void enter_accelerator(const std::string& op, const manifest::SignatureCall& call,
                         TensorRefs inputs, const Stream* given, Device device);
  void leave_accelerator() noexcept;

  Stream stream_;
  bool entered_ = false;
  const AcceleratorProvider* provider_ = nullptr;  // set when the device was switched
  int previous_device_ = -1;
  std::optional<Stream> previous_stream_;  // set when the current stream was replaced
};

}  // namespace tileops::detail
