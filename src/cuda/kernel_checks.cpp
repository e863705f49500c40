// The kernels' checking mode (kernel_checks.hpp; Note [Kernel checking mode]).
#include "cuda/kernel_checks.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cuda/check.hpp"
#include "cuda/runtime.hpp"

namespace tileops::cuda {
namespace {

bool read_checks_env() noexcept {
  const char* v = std::getenv("TILEOPS_CHECK_KERNELS");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

std::atomic<bool>& checks_flag() {
  static std::atomic<bool> flag{read_checks_env()};
  return flag;
}

// Device ordinals with a record; as runtime.cpp's kMaxDevices.
constexpr int kMaxCheckedDevices = 64;

// Per device: the mutex that serialises checked calls, and the record, allocated under it.
struct DeviceChecks {
  std::mutex mutex;
  KernelCheckRecord* record = nullptr;
};

std::array<DeviceChecks, kMaxCheckedDevices>& device_checks() {
  static std::array<DeviceChecks, kMaxCheckedDevices> checks;
  return checks;
}

// Called with the device's mutex held. The memory is kept for the process (a debugging mode's
// few bytes per device), so no call ever frees it under another's kernel.
KernelCheckRecord* record_of(DeviceChecks& checks, int device) {
  if (checks.record == nullptr) {
    DeviceGuard guard(device);
    void* memory = nullptr;
    TILEOPS_CUDA_CHECK(cudaMalloc(&memory, sizeof(KernelCheckRecord)));
    TILEOPS_CUDA_CHECK(cudaMemset(memory, 0, sizeof(KernelCheckRecord)));
    // cudaMemset is not ordered with the library's non-blocking streams: finish it here.
    TILEOPS_CUDA_CHECK(cudaDeviceSynchronize());
    checks.record = static_cast<KernelCheckRecord*>(memory);
  }
  return checks.record;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TILEOPS_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

bool kernel_checks_enabled() noexcept { return checks_flag().load(std::memory_order_relaxed); }

void reload_kernel_checks_setting() noexcept {
  checks_flag().store(read_checks_env(), std::memory_order_relaxed);
}

KernelCheckScope::KernelCheckScope(int device, void* stream) : stream_(stream) {
  if (!kernel_checks_enabled()) return;
  if (device < 0 || device >= kMaxCheckedDevices) return;
  if (capturing(static_cast<cudaStream_t>(stream))) return;
  DeviceChecks& checks = device_checks()[static_cast<std::size_t>(device)];
  lock_ = std::unique_lock<std::mutex>(checks.mutex);
  record_ = record_of(checks, device);
}

std::optional<KernelCheckRecord> KernelCheckScope::take_report() {
  auto stream = static_cast<cudaStream_t>(stream_);
  KernelCheckRecord seen;
  TILEOPS_CUDA_CHECK(cudaMemcpyAsync(&seen, record_, sizeof seen, cudaMemcpyDeviceToHost, stream));
  TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (seen.reported == 0) return std::nullopt;
  const KernelCheckRecord clean;
  TILEOPS_CUDA_CHECK(
      cudaMemcpyAsync(record_, &clean, sizeof clean, cudaMemcpyHostToDevice, stream));
  // `clean` is pageable and on this stack frame: wait for the copy before it goes.
  TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return seen;
}

}  // namespace tileops::cuda
