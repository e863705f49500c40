#include "op/call_device.hpp"

#include <fmt/format.h>

#include "tileops/core/error.hpp"
#include "tileops/manifest/signature_plan.hpp"

namespace tileops::detail {
namespace {

// "x is on cuda:3" for the first input on `device`, else what decided it.
std::string what_is_on(const manifest::SignatureCall& call, TensorRefs inputs, Device device) {
  const auto& decls = call.plan().entry().inputs;
  for (std::size_t i = 0; i < inputs.size() && i < decls.size(); ++i)
    if (inputs[i] && inputs[i]->defined() && inputs[i]->device() == device)
      return fmt::format("{} is on {}", decls[i].name, device.str());
  return fmt::format("the call device is {}", device.str());
}

}  // namespace

void CallDeviceScope::enter_accelerator(const std::string& op, const manifest::SignatureCall& call,
                                        TensorRefs inputs, const Stream* given, Device device) {
  const AcceleratorProvider* p = accelerator_provider();
  if (p && p->type != device.type) p = nullptr;
  // Everything that can fail comes before the device switch, so a failing call changes nothing.
  if (p && p->device_count) {
    const int count = p->device_count();
    if (device.index >= count)
      throw CheckError(
          fmt::format("{}: {}, which does not exist: this process sees {} CUDA device{}", op,
                      what_is_on(call, inputs, device), count, count == 1 ? "" : "s"));
  }
  Stream stream = given ? *given : current_stream(device);
  if (stream.device() != device)
    throw CheckError(fmt::format("{}: the stream is on {} but the call is on {}", op,
                                 stream.device().str(), device.str()));
  if (stream.is_default() && p && p->default_stream)
    stream = Stream(device, p->default_stream(device.index));
  stream_ = stream;
  if (p) {
    const int current = p->current_device();
    if (current != device.index) {
      p->set_current_device(device.index);
      provider_ = p;
      previous_device_ = current;
    }
  }
  entered_ = true;
  const Stream current = current_stream(device);
  if (current != stream_) {
    try {
      set_current_stream(stream_);
    } catch (...) {
      leave_accelerator();
      throw;
    }
    previous_stream_ = current;
  }
}

void CallDeviceScope::leave_accelerator() noexcept {
  // Restoring a stream slot that exists never allocates (StreamGuard's reasoning).
  if (previous_stream_) set_current_stream(*previous_stream_);
  if (provider_) {
    try {
      provider_->set_current_device(previous_device_);
    } catch (...) {
    }
  }
}

}  // namespace tileops::detail
