// Stream: the queue a call's work goes to, as a device plus the device's native handle
// (a cudaStream_t for CUDA, kept as void* so that no public header needs CUDA). The CPU runs
// work in order on the calling thread, so its stream is the null handle.
//
// Each thread has a current stream per device; a call runs on the current stream of its device.
// Callers set it with StreamGuard (the torch integration does so from torch's current stream).
// A device whose current stream was never set runs on its default stream, the null handle.
#pragma once

#include "tileops/core/device.hpp"

namespace tileops {

class Stream {
 public:
  // The CPU stream.
  Stream() noexcept = default;
  Stream(Device device, void* handle) noexcept : device_(device), handle_(handle) {}
  // The device's default stream (null handle).
  static Stream default_for(Device device) noexcept { return {device, nullptr}; }

  Device device() const noexcept { return device_; }
  void* handle() const noexcept { return handle_; }
  bool is_default() const noexcept { return handle_ == nullptr; }

  friend bool operator==(const Stream&, const Stream&) = default;

 private:
  Device device_ = Device::cpu();
  void* handle_ = nullptr;
};

// This thread's current stream for `device`.
Stream current_stream(Device device);
// Makes `stream` this thread's current stream for its device. Prefer StreamGuard, which restores
// the previous one.
void set_current_stream(const Stream& stream);

// Makes a stream current for its device on this thread for the guard's lifetime, then restores
// the stream that was current before. Guards nest; destroy one on the thread that made it.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  const Stream& original() const noexcept { return original_; }

 private:
  Stream original_;
};

}  // namespace tileops
