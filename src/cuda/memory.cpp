// The CUDA side of core's hooks (Note [Device runtimes]): the stream-ordered allocator and the
// copies into, out of and between CUDA devices.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <memory>
#include <utility>

#include "core/device_runtime.hpp"
#include "cuda/check.hpp"
#include "cuda/runtime.hpp"
#include "cuda/strided_copy.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/stream.hpp"

namespace tileops::cuda {
namespace {

// Note [Stream-ordered allocation]
// Memory comes from cudaMallocAsync on the allocation's stream and goes back with cudaFreeAsync
// on the same stream, whichever thread drops the last reference: work queued on that stream
// before the free may still use it, so a kernel's temporaries can be released as soon as it is
// launched, and allocations inside a CUDA graph capture become graph nodes. The stream is the
// resolved native handle (never the null handle, Note [Default stream]), and the allocating
// device is made current for the free. Like cudaFreeAsync itself this asks the caller to keep the
// stream alive while tensors allocated on it live, and to order other streams' use of a tensor
// after its producer (as torch's record_stream does). A caller replaces this allocator with
// set_allocator (torch's caching allocator, for one).
class CudaAsyncAllocator final : public Allocator {
 public:
  DeviceType device_type() const noexcept override { return DeviceType::kCUDA; }

  std::shared_ptr<void> allocate(std::size_t nbytes, const Stream& stream) override {
    const int index = stream.device().index;
    DeviceGuard guard(index);
    auto native = static_cast<cudaStream_t>(native_stream(stream));
    void* memory = nullptr;
    TILEOPS_CUDA_CHECK(cudaMallocAsync(&memory, nbytes, native));
    return std::shared_ptr<void>(memory, [native, index](void* p) noexcept {
      const int previous = current_device_or(index);
      if (previous != index) cudaSetDevice(index);
      detail::report_cuda_error(cudaFreeAsync(p, native), "cudaFreeAsync", __FILE__, __LINE__);
      if (previous != index) cudaSetDevice(previous);
    });
  }

 private:
  // The current device without throwing (a deleter cannot).
  static int current_device_or(int fallback) noexcept {
    if (device_count() <= 1) return fallback;
    int index = fallback;
    return cudaGetDevice(&index) == cudaSuccess ? index : fallback;
  }
};

// The copy of `src` into `dst` (same shape, one device) with unit axes dropped and each axis
// merged into the axis outside it when both views allow it (the outer stride is the inner stride
// times the inner length), so that most copies run with rank 1 or 2.
StridedCopy describe(const Tensor& dst, const Tensor& src) {
  StridedCopy c;
  c.itemsize = static_cast<int>(dst.itemsize());
  c.numel = dst.numel();
  c.dst = dst.data_ptr();
  c.src = src.data_ptr();
  int rank = 0;
  for (std::size_t axis = 0; axis < dst.dim(); ++axis) {
    const std::int64_t length = dst.shape()[axis];
    if (length == 1) continue;
    const std::int64_t ds = dst.strides()[axis], ss = src.strides()[axis];
    if (rank > 0 && c.dst_strides[rank - 1] == ds * length &&
        c.src_strides[rank - 1] == ss * length) {
      c.shape[rank - 1] *= length;
      c.dst_strides[rank - 1] = ds;
      c.src_strides[rank - 1] = ss;
      continue;
    }
    if (rank == kMaxCopyRank)
      throw OpNotAvailableError(fmt::format(
          "Tensor copy on cuda: a view of shape {} (strides {} into strides {}) has more than {} "
          "axes that do not merge",
          dst.shape().str(), src.strides().str(), dst.strides().str(), kMaxCopyRank));
    c.shape[rank] = length;
    c.dst_strides[rank] = ds;
    c.src_strides[rank] = ss;
    ++rank;
  }
  if (rank == 0) {  // a single element
    rank = 1;
    c.shape[0] = 1;
    c.dst_strides[0] = c.src_strides[0] = 1;
  }
  c.rank = rank;
  return c;
}

// Copies between two views on the same device, on the device's current stream.
void copy_on_device(const Tensor& dst, const Tensor& src) {
  const int index = dst.device().index;
  DeviceGuard guard(index);
  auto stream = static_cast<cudaStream_t>(native_stream(current_stream(dst.device())));
  if (dst.is_contiguous() && src.is_contiguous()) {
    TILEOPS_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                       cudaMemcpyDeviceToDevice, stream));
    return;
  }
  launch_strided_copy(describe(dst, src), stream);
}

void synchronize(const Device& device) {
  DeviceGuard guard(device.index);
  TILEOPS_CUDA_CHECK(
      cudaStreamSynchronize(static_cast<cudaStream_t>(native_stream(current_stream(device)))));
}

class CudaRuntime final : public tileops::detail::DeviceRuntime {
 public:
  std::shared_ptr<Allocator> allocator() override { return allocator_; }

  void copy(const Tensor& dst, const Tensor& src) override {
    const Device to = dst.device(), from = src.device();
    if (to.is_cuda() && from.is_cuda()) {
      if (to == from) return copy_on_device(dst, src);
      return copy_between_devices(dst, src);
    }
    if (to.is_cuda()) return upload(dst, src);
    download(dst, src);
  }

 private:
  // Host to device: the packed host values go up into dst (or a packed buffer that is then
  // scattered into a strided dst). The host memory is pageable and may be the caller's temporary,
  // so the stream is synchronised before returning.
  static void upload(const Tensor& dst, const Tensor& src) {
    const Tensor packed = src.contiguous();
    const Tensor target =
        dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), dst.device());
    DeviceGuard guard(dst.device().index);
    auto stream = static_cast<cudaStream_t>(native_stream(current_stream(dst.device())));
    TILEOPS_CUDA_CHECK(cudaMemcpyAsync(target.data_ptr(), packed.data_ptr(), dst.nbytes(),
                                       cudaMemcpyHostToDevice, stream));
    if (!dst.is_contiguous()) copy_on_device(dst, target);
    TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // Device to host: src is gathered on its device when strided, copied down and waited for; a
  // strided host destination is then filled on the host.
  static void download(const Tensor& dst, const Tensor& src) {
    const Tensor packed = src.contiguous();
    Tensor host = dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype());
    {
      DeviceGuard guard(src.device().index);
      auto stream = static_cast<cudaStream_t>(native_stream(current_stream(src.device())));
      TILEOPS_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), packed.data_ptr(), dst.nbytes(),
                                         cudaMemcpyDeviceToHost, stream));
      TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (!dst.is_contiguous()) {
      Tensor view = dst;  // a handle to the caller's view
      view.copy_from(host);
    }
  }

  // Device to device: the source is packed on its device and finished there, then copied peer to
  // peer on the destination's stream (through a packed buffer when dst is strided), which is
  // waited for so that the source's temporaries can go.
  static void copy_between_devices(const Tensor& dst, const Tensor& src) {
    const Tensor packed = src.contiguous();
    synchronize(src.device());
    const Tensor target =
        dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), dst.device());
    DeviceGuard guard(dst.device().index);
    auto stream = static_cast<cudaStream_t>(native_stream(current_stream(dst.device())));
    TILEOPS_CUDA_CHECK(cudaMemcpyPeerAsync(target.data_ptr(), dst.device().index, packed.data_ptr(),
                                           src.device().index, dst.nbytes(), stream));
    if (!dst.is_contiguous()) copy_on_device(dst, target);
    TILEOPS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::shared_ptr<Allocator> allocator_ = std::make_shared<CudaAsyncAllocator>();
};

}  // namespace

tileops::detail::DeviceRuntime* core_runtime() {
  if (device_count() == 0) return nullptr;
  static CudaRuntime runtime;
  return &runtime;
}

}  // namespace tileops::cuda
