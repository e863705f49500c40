// Tensor: a strided view of shared storage. Owning tensors allocate their storage from the
// device's allocator; views and DLPack imports keep their producer alive through the storage.
// Meta tensors have a shape and a dtype but no storage.
//
// Note [No negative strides]
// Strides are non-negative. Every constructor of a view (from_blob, as_strided, DLPack import)
// rejects a negative stride with a typed error, so a view's elements always lie in
// [data_ptr(), data_ptr() + strided_extent * itemsize), which is what bounds checks, aliasing
// checks and kernels rely on. PyTorch tensors never carry negative strides either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "tileops/core/device.hpp"
#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/small_vector.hpp"

namespace tileops {

class Stream;

// A block of memory on one device. The deleter (or owner) runs exactly once, when the last
// tensor referring to it goes away.
class Storage {
 public:
  Storage(void* data, std::size_t nbytes, Device device, std::shared_ptr<void> owner,
          bool read_only = false) noexcept
      : data_(data),
        nbytes_(nbytes),
        device_(device),
        owner_(std::move(owner)),
        read_only_(read_only) {}

  void* data() const noexcept { return data_; }
  std::size_t nbytes() const noexcept { return nbytes_; }
  Device device() const noexcept { return device_; }
  bool read_only() const noexcept { return read_only_; }

 private:
  void* data_;
  std::size_t nbytes_;
  Device device_;
  std::shared_ptr<void> owner_;  // releases the memory when the storage dies
  bool read_only_;
};

class Tensor {
 public:
  // An undefined tensor: no shape, no storage. defined() is false.
  Tensor() = default;

  // A new contiguous tensor from the device's allocator (on `stream` for stream-ordered devices).
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu(),
                      const Stream* stream = nullptr);
  // A tensor with shape and dtype only.
  static Tensor meta(const Shape& shape, DType dtype);
  // A view of memory the caller owns; `owner` (may be null) is kept alive with the storage,
  // whose size is the bytes the view spans. Throws CheckError for a meta device, ranks that
  // differ, negative lengths or strides, or null data under a non-empty view, or data not aligned
  // to the element size (so that every tensor's elements are, and no kernel loads one from an
  // address its type may not be read at).
  static Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype,
                          Device device, std::shared_ptr<void> owner = nullptr,
                          bool read_only = false);

  bool defined() const noexcept { return defined_; }
  const Shape& shape() const noexcept { return shape_; }
  const Shape& strides() const noexcept { return strides_; }
  DType dtype() const noexcept { return dtype_; }
  Device device() const noexcept { return device_; }
  std::int64_t byte_offset() const noexcept { return byte_offset_; }
  std::size_t dim() const noexcept { return shape_.size(); }
  // Counted once, when the view is made: the call path asks it of every tensor several times.
  std::int64_t numel() const noexcept { return numel_; }
  std::size_t itemsize() const noexcept { return dtype_size(dtype_); }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel()) * itemsize(); }
  bool is_meta() const noexcept { return device_.is_meta(); }
  bool read_only() const noexcept { return storage_ && storage_->read_only(); }
  const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }

  // Address of element 0 (storage base + byte offset); null for meta and empty-storage tensors.
  void* data_ptr() const noexcept {
    if (!storage_ || storage_->data() == nullptr) return nullptr;
    return static_cast<std::byte*>(storage_->data()) + byte_offset_;
  }
  template <class T>
  T* data() const noexcept {
    return static_cast<T*>(data_ptr());
  }

  // Row-major contiguous (axes of length 1 may carry any stride). Decided once, when the view
  // is made: the call path asks it of every tensor several times.
  bool is_contiguous() const noexcept { return contiguous_; }
  // True when both tensors are views of the same memory whose byte ranges overlap; false for
  // meta tensors, undefined tensors and empty ranges. Memory is compared by address, so two
  // storages over the same memory (a DLPack round trip, two from_blob calls) count as shared.
  // Views whose ranges overlap share no element when both step the same bytes along their first
  // axis and their bands within that step do not meet (Note [Disjoint bands] in tensor.cpp: the
  // head ranges of a fused qkv tensor); other interleaved views count as sharing, conservatively.
  bool shares_storage_with(const Tensor& other) const noexcept;
  // True when two elements of this view are one memory location (elements_overlap), so writing
  // it would depend on the order of the writes. A contiguous view answers at once.
  bool has_internal_overlap() const noexcept {
    return defined_ && !contiguous_ && elements_overlap(shape_, strides_);
  }

  // A view with the given geometry over the same storage; `byte_offset` counts from the
  // storage's start. Throws CheckError when it would reach outside the storage, for negative
  // strides (Note [No negative strides]) and for an offset that is not a multiple of the element
  // size. A meta tensor has no storage to bound, so any geometry is a valid meta view.
  Tensor as_strided(const Shape& shape, const Shape& strides, std::int64_t byte_offset) const;
  // A contiguous copy, or this tensor when it already is contiguous. A device tensor is copied by
  // its device runtime, in stream order on the device's current stream (Note [Device runtimes]
  // in src/core/device_runtime.hpp); without one (a CPU-only build, no device) a non-contiguous
  // device tensor throws OpNotAvailableError.
  Tensor contiguous() const;
  // A contiguous copy on `device` with `dtype` (PyTorch's casts, through float64: exact but for
  // int64 beyond 2^53, done on the host), or this tensor when both already match. Between the CPU
  // and a device, or two devices, the device runtime copies; it returns once the host side is
  // read or written (device to device: once the copy is done). OpNotAvailableError when a side
  // has no runtime.
  Tensor to(Device device, DType dtype) const;
  // Copies `src` (same shape and dtype, any strides, any devices a runtime connects) into this
  // view, element by element; overlapping views go through a private copy.
  void copy_from(const Tensor& src);

 private:
  static bool row_major(const Shape& shape, const Shape& strides) noexcept;

  Shape shape_;
  Shape strides_;
  std::shared_ptr<Storage> storage_;
  std::int64_t byte_offset_ = 0;
  std::int64_t numel_ = 1;  // shape_.numel(), kept with the shape (1 for an undefined tensor's [])
  DType dtype_ = DType::kFloat32;
  Device device_;
  bool defined_ = false;
  bool contiguous_ = false;
};

// Note [Borrowed call inputs]
// An op call reads its inputs and keeps none of them past the call (an output that aliases an
// input is a copy the caller receives), so the call path takes them borrowed: one pointer per
// input in signature order, null for an optional input left out. A list of std::optional<Tensor>
// would copy each tensor into it, and a copy bumps the storage's atomic count twice (copy and
// release): eight such copies were a quarter of RoPE's cache-hit call.
using TensorRefs = std::span<const Tensor* const>;

// The tensor an optional holds, borrowed, or null.
inline const Tensor* borrow(const std::optional<Tensor>& t) noexcept { return t ? &*t : nullptr; }

// TensorRefs over a list of optional tensors, which must outlive it.
class BorrowedTensors {
 public:
  explicit BorrowedTensors(std::span<const std::optional<Tensor>> tensors) {
    for (const std::optional<Tensor>& t : tensors) refs_.push_back(borrow(t));
  }
  TensorRefs refs() const noexcept { return {refs_.data(), refs_.size()}; }

 private:
  SmallVector<const Tensor*, 8> refs_;
};

}  // namespace tileops
