// Note [Python streams]
// A CUDA call from Python runs on the caller's framework's current stream (torch's, CuPy's), which
// the Python side reads and passes as a DLPack stream number: the inputs are imported with
// __dlpack__(stream=...) so that their producer orders its pending writes before it, the op runs
// on it (a StreamGuard for the call), and each output remembers it, so that a consumer that asks
// for another stream (torch.from_dlpack passes its current one) gets an event between the two.
// DLPack numbers the legacy default stream 1 and the per-thread default stream 2, which are also
// the CUDA runtime's handles for them (cudaStreamLegacy, cudaStreamPerThread); torch reports its
// legacy default stream as 0, which is taken to mean the same stream.
//
// Memory: set_cuda_allocator installs, for every CUDA allocation of the library (outputs and
// temporaries), an allocator that calls two Python functions, alloc(nbytes, device, stream) -> int
// and free(pointer) (tileops._torch installs torch's caching allocator this way when the package
// has no libtileops_torch, which otherwise calls it from C++: Note [torch's caching allocator from
// C++] in python/torch_kernel/cuda/caching_allocator.cpp; on a CUDA graph capture stream torch
// serves the capture's private pool). Each takes the GIL; a free after the interpreter began
// finalising leaks the block instead of running Python.
#include "streams.hpp"

#include <Python.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>

#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"

#if TILEOPS_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/runtime.hpp"
#endif

namespace nb = nanobind;

namespace tileops::python {
namespace {

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

#if TILEOPS_WITH_CUDA
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw CudaError(
        fmt::format("tileops (Python): {} failed: {}", what, cudaGetErrorString(status)));
}

// The Python functions of an installed allocator. Never destroyed: deleters of blocks it handed
// out may run at any time, even after another allocator replaced it.
struct PythonMemory {
  nb::object alloc;
  nb::object free;
};

class PythonAllocator final : public Allocator {
 public:
  explicit PythonAllocator(PythonMemory* memory) : memory_(memory) {}

  DeviceType device_type() const noexcept override { return DeviceType::kCUDA; }

  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    const auto native = reinterpret_cast<std::intptr_t>(cuda::native_stream(stream));
    std::intptr_t address = 0;
    {
      nb::gil_scoped_acquire gil;
      address = nb::cast<std::intptr_t>(memory_->alloc(nbytes, stream.device().index, native));
    }
    if (address == 0)
      throw CheckError(
          fmt::format("tileops (Python): the installed CUDA allocator returned a null "
                      "pointer for {} bytes",
                      nbytes));
    PythonMemory* memory = memory_;
    return std::shared_ptr<void>(reinterpret_cast<void*>(address), [memory](void* p) noexcept {
      if (interpreter_finalizing()) return;
      const PyGILState_STATE state = PyGILState_Ensure();
      try {
        memory->free(reinterpret_cast<std::intptr_t>(p));
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("tileops: freeing CUDA memory through the installed allocator");
      }
      PyGILState_Release(state);
    });
  }

 private:
  PythonMemory* memory_;
};

void* cuda_handle(std::intptr_t dlpack_stream) {
  return reinterpret_cast<void*>(dlpack_stream == 0 ? 1 : dlpack_stream);
}
#endif

}  // namespace

Stream stream_of(int index, std::intptr_t dlpack_stream) {
#if TILEOPS_WITH_CUDA
  return Stream(Device::cuda(index), cuda_handle(dlpack_stream));
#else
  (void)dlpack_stream;
  return Stream::default_for(Device::cuda(index));
#endif
}

void order_after(int index, std::intptr_t producer, std::intptr_t consumer) {
#if TILEOPS_WITH_CUDA
  if (consumer == -1) return;
  void* from = cuda_handle(producer);
  void* to = cuda_handle(consumer);
  if (from == to) return;
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  if (previous != index) check(cudaSetDevice(index), "cudaSetDevice");
  cudaEvent_t event = nullptr;
  cudaError_t status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (status == cudaSuccess) status = cudaEventRecord(event, static_cast<cudaStream_t>(from));
  if (status == cudaSuccess) status = cudaStreamWaitEvent(static_cast<cudaStream_t>(to), event, 0);
  if (event != nullptr) cudaEventDestroy(event);
  if (previous != index) cudaSetDevice(previous);
  check(status,
        "ordering the consumer's stream after the op's (cudaEventRecord/cudaStreamWaitEvent)");
#else
  (void)index;
  (void)producer;
  (void)consumer;
#endif
}

void bind_streams(nb::module_& m) {
#if TILEOPS_WITH_CUDA
  m.attr("built_with_cuda") = true;
#else
  m.attr("built_with_cuda") = false;
#endif
  m.def(
      "set_cuda_allocator",
      [](nb::object alloc, nb::object free) {
        if (alloc.is_none() != free.is_none())
          throw nb::type_error("set_cuda_allocator: pass both alloc and free, or neither");
#if TILEOPS_WITH_CUDA
        if (alloc.is_none()) {
          set_allocator(DeviceType::kCUDA, nullptr);
          return;
        }
        auto* memory = new PythonMemory{std::move(alloc), std::move(free)};  // Never freed.
        set_allocator(DeviceType::kCUDA, std::make_shared<PythonAllocator>(memory));
#else
        if (!alloc.is_none())
          throw OpNotAvailableError("set_cuda_allocator: this build of tileops has no CUDA");
#endif
      },
      nb::arg("alloc").none(), nb::arg("free").none(),
      "Every CUDA allocation of the library through alloc(nbytes, device, stream) -> int and "
      "free(pointer) (Python functions, called with the GIL); None, None restores the built-in "
      "stream-ordered allocator.");
}

}  // namespace tileops::python
