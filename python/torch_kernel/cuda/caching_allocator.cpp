// torch's CUDA caching allocator as the library's CUDA allocator, called from C++.
//
// Note [torch's caching allocator from C++]
// Once torch is in the process, the library's CUDA memory (outputs and kernels' temporaries) is
// torch's (Note [Python streams] in python/src/streams.cpp): torch accounts for it, reuses it in
// stream order, and serves a CUDA graph capture from the capture's private pool. The Python
// package could install that allocator as two Python functions (set_cuda_allocator), but each
// allocation then took the GIL back and ran a Python call, about a microsecond: a torch operator
// call on a small row paid more for its output than torch's own rms_norm paid for everything. Here
// the allocator calls c10's caching allocator directly: raw_alloc_with_stream on the allocation's
// stream (the library's resolved native stream, so a call on torch's current stream allocates as
// torch would) with the allocation's device current, and raw_delete from the deleter, on any
// thread, without the GIL. tileops/_torch.py installs it when this library is loaded
// (tileops_torch_install_cuda_allocator) and keeps the Python pair otherwise.
//
// A block released after the interpreter began finalising is left to the process exit, as the
// Python pair does: by then torch's allocator may be gone.
#include <Python.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>

#include <cstddef>
#include <memory>
#include <string>

#include "cuda/runtime.hpp"
#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"

namespace {

using namespace tileops;

bool interpreter_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// Formatted without fmt: torch's include folders carry a fmt of their own, which this library's
// headers would meet before the one it links.
std::string what_failed(std::size_t nbytes, int index) {
  return "tileops (torch): torch's caching allocator could not allocate " + std::to_string(nbytes) +
         " bytes on cuda:" + std::to_string(index);
}

class TorchCachingAllocator final : public Allocator {
 public:
  DeviceType device_type() const noexcept override { return DeviceType::kCUDA; }

  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    const int index = stream.device().index;
    cuda::DeviceGuard guard(index);  // c10 allocates on the current device
    void* memory = nullptr;
    try {
      memory = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(
          nbytes, static_cast<cudaStream_t>(cuda::native_stream(stream)));
    } catch (const c10::Error& e) {
      throw CudaError(what_failed(nbytes, index) + ": " + e.what_without_backtrace());
    }
    if (memory == nullptr) throw CudaError(what_failed(nbytes, index) + ": a null pointer");
    return std::shared_ptr<void>(memory, [](void* p) noexcept {
      if (interpreter_finalizing()) return;
      try {
        c10::cuda::CUDACachingAllocator::raw_delete(p);
      } catch (...) {  // a deleter cannot throw; the block stays with torch
      }
    });
  }
};

}  // namespace

extern "C" {

// Installs torch's caching allocator for the library's CUDA memory; returns 1, or 0 when it
// could not (the caller keeps the allocator it had).
__attribute__((visibility("default"))) int tileops_torch_install_cuda_allocator() {
  try {
    set_allocator(DeviceType::kCUDA, std::make_shared<TorchCachingAllocator>());
    return 1;
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
