// The kernels' checking mode (TILEOPS_CHECK_KERNELS=1): value checks that a kernel can only make
// on the device (an index read from a tensor) become the library's typed CheckError on the host.
// No CUDA header here: the adapters of kernels/*/cuda include it; the device side is
// kernels/common/cuda/kernel_check.cuh.
//
// Note [Kernel checking mode]
// A kernel that meets a value it cannot use (a RoPE position outside the cache) never reads or
// writes out of bounds: it skips the work that value names, always. What it cannot do on its own
// is tell the caller, because raising means waiting for the kernel. The checking mode does that
// wait, for debugging and tests:
//
//   - the kernel receives a KernelCheckRecord* (null when the mode is off) and reports the first
//     bad value it meets (report_kernel_check: the lowest index wins, whatever the order the
//     blocks ran in, so the message is the one the CPU kernel gives for the same input);
//   - after the launch, the call synchronises its stream, reads the record, resets it and raises
//     CheckError with the message the op formats from (index, value).
//
// The record is one small allocation per device, made at the first checked call and kept for the
// process; checked calls on one device are serialised (a mutex held from before the launch to the
// read), so that two streams never share a report. Without the mode a call pays one relaxed load:
// no synchronisation, no allocation, no lock. A call on a stream being captured into a CUDA graph
// is not checked (it cannot synchronise); its kernel still skips bad values.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

#include "tileops/core/error.hpp"

namespace tileops::cuda {

// What a kernel reports, in device memory. `lock` guards the other fields on the device; the
// host reads them after the kernel finished.
struct KernelCheckRecord {
  std::uint32_t lock = 0;
  std::uint32_t reported = 0;  // 0 until a report
  std::int64_t index = 0;      // where the bad value is (a token, a row)
  std::int64_t value = 0;      // the bad value
};

// TILEOPS_CHECK_KERNELS is set to something other than "" or "0". Read at the first use.
bool kernel_checks_enabled() noexcept;
// Reads TILEOPS_CHECK_KERNELS again (a test that sets it for a while, then restores it).
void reload_kernel_checks_setting() noexcept;

// The checking of one kernel call on `device` and `stream` (a cudaStream_t): construct it before
// the launch, pass record() to the kernel, call raise_if_reported() after the launch.
class KernelCheckScope {
 public:
  KernelCheckScope(int device, void* stream);
  KernelCheckScope(const KernelCheckScope&) = delete;
  KernelCheckScope& operator=(const KernelCheckScope&) = delete;

  // The record the kernel reports to; null when this call is not checked.
  KernelCheckRecord* record() const noexcept { return record_; }

  // When checked: synchronises the stream, and raises CheckError(message(index, value)) (a
  // std::string) if the kernel reported, after resetting the record. Nothing otherwise.
  template <class Message>
  void raise_if_reported(const Message& message) {
    if (record_ == nullptr) return;
    if (const std::optional<KernelCheckRecord> seen = take_report())
      throw CheckError(message(seen->index, seen->value));
  }

 private:
  // Synchronises the stream and reads the record; resets it when it holds a report.
  std::optional<KernelCheckRecord> take_report();

  void* stream_ = nullptr;
  KernelCheckRecord* record_ = nullptr;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace tileops::cuda
