// Devices, their facts, the current device and default streams (runtime.hpp).
#include "cuda/runtime.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "cuda/check.hpp"
#include "tileops/core/error.hpp"

namespace tileops::cuda {

namespace detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line) {
  // A failed call may leave its error as the thread's last error; clear it so that the next
  // launch check reports its own launch, not this call.
  cudaGetLastError();
  throw CudaError(fmt::format("CUDA error at {}:{}: {}: {} ({})", file, line, call,
                              cudaGetErrorName(status), cudaGetErrorString(status)));
}

void report_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  // The process is tearing CUDA down (static destructors after the runtime unloaded): memory is
  // released with the context, so there is nothing to report.
  if (status == cudaSuccess || status == cudaErrorCudartUnloading ||
      status == cudaErrorContextIsDestroyed)
    return;
  cudaGetLastError();
  std::fprintf(stderr, "tileops: warning: CUDA error at %s:%d: %s: %s (%s)\n", file, line, call,
               cudaGetErrorName(status), cudaGetErrorString(status));
}

}  // namespace detail

namespace {

// Device ordinals a process may see; CUDA_VISIBLE_DEVICES keeps real machines far below it.
constexpr int kMaxDevices = 64;

int probe_device_count() noexcept {
  int count = 0;
  // No driver, no device, or a driver older than the runtime: the process has no CUDA device.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count < kMaxDevices ? count : kMaxDevices;
}

// Note [Per-device state]
// What the library keeps per device is filled once, under a mutex, at the device's first use,
// and read afterwards without a lock: `ready` is released after the fields are written and
// acquired before they are read. The call path reads the facts on every call (KernelContext) and
// the default stream whenever a caller set none, so neither may cost a lock or a CUDA call.
struct DeviceState {
  std::atomic<bool> ready{false};
  Facts facts;
  std::atomic<void*> default_stream{nullptr};
};

struct Devices {
  std::mutex mutex;
  std::array<DeviceState, kMaxDevices> states;
};

Devices& devices() {
  static Devices d;
  return d;
}

int attribute(cudaDeviceAttr attr, int index) {
  int value = 0;
  TILEOPS_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, index));
  return value;
}

// Reads the device's facts and sets up its memory pool; called once per device.
void initialise(DeviceState& state, int index) {
  Facts f;
  f.arch = 10 * attribute(cudaDevAttrComputeCapabilityMajor, index) +
           attribute(cudaDevAttrComputeCapabilityMinor, index);
  f.sm_count = attribute(cudaDevAttrMultiProcessorCount, index);
  f.smem_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, index);
  f.l2_bytes = attribute(cudaDevAttrL2CacheSize, index);
  // Note [Pool release threshold]: the stream-ordered allocator's default pool hands memory back
  // to the driver at every synchronisation unless told to keep it, which turns the steady
  // allocation of outputs into repeated mapping work. The pool keeps what it has; the memory is
  // released when the process ends (or by cudaMemPoolTrimTo).
  cudaMemPool_t pool = nullptr;
  TILEOPS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
  std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
  TILEOPS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  state.facts = f;
}

DeviceState& state_of(int index, const char* who) {
  check_device(index, who);
  DeviceState& state = devices().states[static_cast<std::size_t>(index)];
  if (state.ready.load(std::memory_order_acquire)) return state;
  std::lock_guard<std::mutex> lock(devices().mutex);
  if (!state.ready.load(std::memory_order_relaxed)) {
    initialise(state, index);
    state.ready.store(true, std::memory_order_release);
  }
  return state;
}

}  // namespace

int device_count() noexcept {
  static const int count = probe_device_count();
  return count;
}

void check_device(int index, const char* who) {
  const int count = device_count();
  if (index >= 0 && index < count) return;
  throw CheckError(fmt::format("{}: cuda:{} does not exist; this process sees {} CUDA device{}",
                               who, index, count, count == 1 ? "" : "s"));
}

const Facts& facts(int index) { return state_of(index, "cuda device facts").facts; }

// Note [Current device]
// CUDA keeps the current device per thread, and code outside the library (torch's device guards,
// a user's cudaSetDevice) changes it without telling us, so a cached copy could be stale and a
// kernel would go to the wrong device. With a single device there is nothing to cache: device 0 is
// always current and no CUDA call is made. With several, cudaGetDevice (a read of the runtime's
// thread state) is asked each time.
int current_device() {
  if (device_count() <= 1) return 0;
  int index = 0;
  TILEOPS_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

void set_current_device(int index) {
  check_device(index, "set_current_device");
  if (device_count() == 1) return;
  TILEOPS_CUDA_CHECK(cudaSetDevice(index));
}

DeviceGuard::DeviceGuard(int index) {
  check_device(index, "cuda device guard");
  const int previous = current_device();
  if (previous != index) {
    set_current_device(index);
    previous_ = previous;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0)
    detail::report_cuda_error(cudaSetDevice(previous_), "cudaSetDevice(previous)", __FILE__,
                              __LINE__);
}

void* default_stream(int index) {
  DeviceState& state = state_of(index, "default stream");
  if (void* s = state.default_stream.load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(devices().mutex);
  if (void* s = state.default_stream.load(std::memory_order_relaxed)) return s;
  DeviceGuard guard(index);
  cudaStream_t stream = nullptr;
  TILEOPS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  state.default_stream.store(stream, std::memory_order_release);
  return stream;
}

void* native_stream(const Stream& stream) {
  if (stream.handle() != nullptr) return stream.handle();
  return default_stream(stream.device().index);
}

namespace {

bool read_nvtx_env() noexcept {
  const char* v = std::getenv("TILEOPS_NVTX");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

}  // namespace

bool nvtx_enabled() noexcept {
  static const bool enabled = read_nvtx_env();
  return enabled;
}

}  // namespace tileops::cuda
