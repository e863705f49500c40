// Allocator: where Tensor::empty gets memory, one per device type. The CPU has a built-in
// allocator of 64-byte aligned host memory. A CUDA build on a machine with a GPU has a built-in
// stream-ordered CUDA allocator (cudaMallocAsync/cudaFreeAsync on the allocation's stream,
// docs/cuda.md); elsewhere a CUDA allocation fails with OpNotAvailableError until one is
// installed. Users may install their own allocator for any device type with memory (a caching
// pool, a framework's allocator such as torch's, ...); it replaces the built-in one.
#pragma once

#include <cstddef>
#include <memory>

#include "tileops/core/device.hpp"
#include "tileops/core/stream.hpp"

namespace tileops {

class Allocator {
 public:
  virtual ~Allocator() = default;

  // The device type whose memory this allocator hands out.
  virtual DeviceType device_type() const noexcept = 0;

  // At least `nbytes` (> 0) bytes on `stream.device()`, usable in stream order on `stream`,
  // aligned to kAllocationAlignment. The result's get() is the memory; its deleter frees it,
  // possibly on another thread and after the allocator was uninstalled, so a stateful allocator
  // makes the deleter keep what it needs alive. Throws (std::bad_alloc or an Error) when it cannot
  // allocate; never returns null.
  virtual std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) = 0;
};

// The alignment of every allocator's memory: the kernels' 16-byte vector loads and stores assume
// it of each tensor Tensor::empty makes (a call's access class counts only the addresses of the
// tensors it was given), and it aligns an element of every dtype. Tensor::empty refuses memory
// without it with a ContractError.
inline constexpr std::size_t kAllocationAlignment = 16;

// The alignment of every host allocation the built-in CPU allocator makes: a cache line, and
// enough for any vector load.
inline constexpr std::size_t kCpuAlignment = 64;

// The built-in CPU allocator.
std::shared_ptr<Allocator> cpu_allocator();

// The allocator installed for `type`: the user's, else the built-in one; null when there is none
// (CUDA in a CPU-only build or without a device, before one is installed; meta always).
// Thread-safe.
std::shared_ptr<Allocator> allocator_for(DeviceType type);

// Installs `allocator` for `type` and returns the one it replaces (null if none was installed);
// null uninstalls, restoring the built-in allocator. Allocations already made keep their
// deleters. Throws CheckError for the meta device type or an allocator of another device type.
// Thread-safe.
std::shared_ptr<Allocator> set_allocator(DeviceType type, std::shared_ptr<Allocator> allocator);

}  // namespace tileops
