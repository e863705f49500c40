// The CUDA runtime of the library, as the rest of the library sees it: devices, their facts, the
// current device, default streams, and the core hooks (allocator, copies). No CUDA header here, so
// core and op-layer sources can include it; src/cuda/*.cpp and the kernels' .cu files talk to
// CUDA. docs/cuda.md records the decisions.
#pragma once

#include <cstdint>

#include "tileops/core/stream.hpp"

namespace tileops::detail {
class DeviceRuntime;
}

namespace tileops::cuda {

// The devices this process sees; 0 without a driver or a device. Probed once, then a plain read.
int device_count() noexcept;

// CheckError from `who` when `index` names no device of this process.
void check_device(int index, const char* who);

// What a kernel's launch configuration reads about a device.
struct Facts {
  int arch = -1;                // SM version: 90 for sm_90
  int sm_count = 0;             // multiprocessors
  std::int64_t smem_optin = 0;  // shared memory a block may opt in to, bytes
  std::int64_t l2_bytes = 0;
};
// Facts of device `index`, read from the device once and then without a lock (Note [Per-device
// state] in runtime.cpp). CheckError for an index this process does not see.
const Facts& facts(int index);

// The calling thread's current device, and making one current. Note [Current device] in
// runtime.cpp: with one device nothing is asked of CUDA.
int current_device();
void set_current_device(int index);

// Device `index` current for the guard's lifetime, then the previous one again; nothing when it
// already is current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Note [Default stream]: a CUDA stream with the null handle is the device's default stream, which
// this library takes to be its own non-blocking stream per device, created at first use and kept
// for the life of the process: a real handle (valid on every thread, so a tensor's memory can be
// freed in stream order from anywhere) that never joins the legacy default stream (no implicit
// synchronisation, nothing that breaks another stream's graph capture). Returns it as void*.
void* default_stream(int index);
// The native handle of `stream` (a CUDA stream): its own, or the default stream for the null
// handle.
void* native_stream(const Stream& stream);

// The core hooks (Note [Device runtimes] in src/core/device_runtime.hpp): null when the process
// sees no CUDA device.
::tileops::detail::DeviceRuntime* core_runtime();

// TILEOPS_NVTX=1: each op call is an NVTX range named after the op. Read once.
bool nvtx_enabled() noexcept;
void nvtx_push(const char* name) noexcept;
void nvtx_pop() noexcept;

}  // namespace tileops::cuda
