#include "tileops/core/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "core/device_runtime.hpp"
#include "tileops/core/allocator.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"
#include "tileops/core/stream.hpp"

namespace tileops {

namespace {

// Throws CheckError from `who` unless every axis length is non-negative.
void check_lengths(const char* who, const Shape& shape) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw CheckError(std::string(who) + ": negative length " + std::to_string(shape[i]) +
                       " at axis " + std::to_string(i) + " of shape " + shape.str());
    }
  }
}

// Bytes a contiguous tensor of `shape` and `dtype` occupies; throws CheckError from `who` when
// a length is negative or the size overflows.
std::size_t contiguous_nbytes(const char* who, const Shape& shape, DType dtype) {
  check_lengths(who, shape);
  std::optional<std::int64_t> numel = shape.checked_numel();
  std::int64_t nbytes = 0;
  if (!numel ||
      __builtin_mul_overflow(*numel, static_cast<std::int64_t>(dtype_size(dtype)), &nbytes)) {
    throw CheckError(std::string(who) + ": shape " + shape.str() +
                     " holds more bytes than int64 can count");
  }
  return static_cast<std::size_t>(nbytes);
}

// Elements spanned by a view (strided_extent), or CheckError from `who` saying what is wrong.
std::int64_t checked_extent(const char* who, const Shape& shape, const Shape& strides) {
  if (shape.size() != strides.size()) {
    throw CheckError(std::string(who) + ": shape " + shape.str() + " has rank " +
                     std::to_string(shape.size()) + " but strides " + strides.str() +
                     " have rank " + std::to_string(strides.size()));
  }
  check_lengths(who, shape);
  for (std::size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] < 0) {
      throw CheckError(std::string(who) + ": negative stride " + std::to_string(strides[i]) +
                       " at axis " + std::to_string(i) + " (negative strides are not supported)");
    }
  }
  std::optional<std::int64_t> extent = strided_extent(shape, strides);
  // numel() is unchecked arithmetic, so every tensor's element count must fit (a view with zero
  // strides can span few elements yet count many).
  if (!extent || !shape.checked_numel()) {
    throw CheckError(std::string(who) + ": a view of shape " + shape.str() + " with strides " +
                     strides.str() + " counts more elements than int64 can hold");
  }
  return *extent;
}

// Bytes from element 0 of a view through the end of its last element.
std::int64_t checked_extent_bytes(const char* who, const Shape& shape, const Shape& strides,
                                  std::int64_t extent, DType dtype) {
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(extent, static_cast<std::int64_t>(dtype_size(dtype)), &bytes)) {
    throw CheckError(std::string(who) + ": a view of shape " + shape.str() + " with strides " +
                     strides.str() + " spans more bytes than int64 can count");
  }
  return bytes;
}

// Walks the elements of a non-empty strided view in row-major order, copying each between the
// view (`strided`) and a contiguous buffer (`packed`): gathering when `gather`, else scattering.
// The last axis is the inner loop; an odometer over the outer axes keeps the view's offset.
void copy_strided(std::byte* strided, const Shape& shape, const Shape& strides,
                  std::size_t itemsize, std::byte* packed, bool gather) {
  const std::size_t rank = shape.size();
  const std::int64_t inner = shape[rank - 1];
  const std::int64_t inner_stride = strides[rank - 1];
  const std::int64_t rows = shape.numel() / inner;
  Shape index = Shape::filled(rank, 0);
  std::int64_t offset = 0;  // of the current row's first element, in elements
  for (std::int64_t row = 0; row < rows; ++row) {
    std::byte* row_view = strided + offset * static_cast<std::int64_t>(itemsize);
    if (inner_stride == 1) {
      const std::size_t bytes = static_cast<std::size_t>(inner) * itemsize;
      gather ? std::memcpy(packed, row_view, bytes) : std::memcpy(row_view, packed, bytes);
      packed += bytes;
    } else {
      for (std::int64_t i = 0; i < inner; ++i, packed += itemsize) {
        std::byte* element = row_view + i * inner_stride * static_cast<std::int64_t>(itemsize);
        gather ? std::memcpy(packed, element, itemsize) : std::memcpy(element, packed, itemsize);
      }
    }
    for (std::size_t axis = rank - 1; axis-- > 0;) {
      offset += strides[axis];
      if (++index[axis] < shape[axis]) break;
      offset -= strides[axis] * shape[axis];
      index[axis] = 0;
    }
  }
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device, const Stream* stream) {
  if (device.is_meta()) return meta(shape, dtype);
  const std::size_t nbytes = contiguous_nbytes("Tensor::empty", shape, dtype);
  // An empty tensor needs no memory, so it needs no allocator either (a call whose outputs are
  // all empty completes on any device); allocators never see a zero-byte request.
  std::shared_ptr<void> memory;
  if (nbytes > 0) {
    std::shared_ptr<Allocator> allocator = allocator_for(device.type);
    if (!allocator) {
      throw OpNotAvailableError("Tensor::empty: no allocator is installed for " + device.str() +
                                " (install one with set_allocator)");
    }
    const Stream on = stream ? *stream : current_stream(device);
    if (on.device() != device) {
      throw CheckError("Tensor::empty: the stream is on " + on.device().str() +
                       " but the tensor is to be on " + device.str());
    }
    memory = allocator->allocate(nbytes, on);
    if (reinterpret_cast<std::uintptr_t>(memory.get()) % kAllocationAlignment != 0) {
      char address[32];
      std::snprintf(address, sizeof address, "%p", memory.get());
      throw ContractError("Tensor::empty: the allocator for " + device.str() +
                          " returned memory at " + address + ", not aligned to " +
                          std::to_string(kAllocationAlignment) + " bytes as allocate() must");
    }
  }
  void* data = memory.get();

  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape.numel();
  t.strides_ = contiguous_strides(shape);
  t.contiguous_ = true;
  t.storage_ = std::make_shared<Storage>(data, nbytes, device, std::move(memory));
  t.dtype_ = dtype;
  t.device_ = device;
  t.defined_ = true;
  return t;
}

Tensor Tensor::meta(const Shape& shape, DType dtype) {
  contiguous_nbytes("Tensor::meta", shape, dtype);
  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape.numel();
  t.strides_ = contiguous_strides(shape);
  t.contiguous_ = true;
  t.dtype_ = dtype;
  t.device_ = Device::meta();
  t.defined_ = true;
  return t;
}

Tensor Tensor::from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype,
                         Device device, std::shared_ptr<void> owner, bool read_only) {
  constexpr const char* kWho = "Tensor::from_blob";
  if (device.is_meta()) {
    throw CheckError("Tensor::from_blob: a meta tensor has no data; use Tensor::meta");
  }
  const std::int64_t extent = checked_extent(kWho, shape, strides);
  if (extent > 0 && data == nullptr) {
    throw CheckError("Tensor::from_blob: null data for a view of shape " + shape.str());
  }
  // Every tensor's elements are aligned to their size (tensor.hpp), so that no kernel loads one
  // from an address its type may not be read at: a fault on a GPU, undefined behaviour in C++.
  if (extent > 0 && reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) != 0) {
    char address[32];
    std::snprintf(address, sizeof address, "%p", data);
    throw CheckError(std::string("Tensor::from_blob: data at ") + address +
                     " is not aligned to its " + std::to_string(dtype_size(dtype)) + "-byte " +
                     std::string(dtype_name(dtype)) + " elements");
  }
  // The caller vouches for the memory the view spans and nothing more, so that is the storage.
  const std::int64_t nbytes = checked_extent_bytes(kWho, shape, strides, extent, dtype);

  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape.numel();
  t.strides_ = strides;
  t.contiguous_ = row_major(shape, strides);
  t.storage_ = std::make_shared<Storage>(data, static_cast<std::size_t>(nbytes), device,
                                         std::move(owner), read_only);
  t.dtype_ = dtype;
  t.device_ = device;
  t.defined_ = true;
  return t;
}

bool Tensor::row_major(const Shape& shape, const Shape& strides) noexcept {
  if (shape.numel() == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

namespace {

// Note [Disjoint bands]
// Views whose byte ranges overlap may still share no element: the head ranges of a fused qkv
// tensor ([N, Hq + 2 Hk, D], query and key its heads [0, Hq) and [Hq, Hq + Hk)) interleave row by
// row. When both views step the same S > 0 bytes along their first axis, the elements of row r of
// a lie in [a + r S, a + r S + inner_a), inner_a the bytes its other axes span (an empty band for
// a view of one axis: one element), and so for b. With d = (b - a) mod S, an element of b meets
// one of a only if d < inner_a or d + inner_b > S: otherwise the bands, taken modulo S, are
// disjoint, whatever the rows. Anything else keeps the conservative answer.
bool in_disjoint_bands(const Tensor& a, const Tensor& b, std::uintptr_t a_first,
                       std::uintptr_t b_first) noexcept {
  if (a.dim() == 0 || b.dim() == 0) return false;
  const std::int64_t step = a.strides()[0] * static_cast<std::int64_t>(a.itemsize());
  if (step <= 0 || b.strides()[0] * static_cast<std::int64_t>(b.itemsize()) != step) return false;
  // The bytes a view's axes after the first span: its last element's offset plus one element.
  const auto inner_bytes = [](const Tensor& t) -> std::optional<std::int64_t> {
    std::int64_t last = 0;
    for (std::size_t i = 1; i < t.dim(); ++i) {
      std::int64_t reach = 0;
      if (__builtin_mul_overflow(t.shape()[i] - 1, t.strides()[i], &reach) ||
          __builtin_add_overflow(last, reach, &last))
        return std::nullopt;
    }
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(last + 1, static_cast<std::int64_t>(t.itemsize()), &bytes))
      return std::nullopt;
    return bytes;
  };
  const std::optional<std::int64_t> inner_a = inner_bytes(a);
  const std::optional<std::int64_t> inner_b = inner_bytes(b);
  if (!inner_a || !inner_b) return false;
  // (b - a) mod step, in [0, step): the addresses lie in one storage, so their difference fits.
  const std::int64_t diff = b_first >= a_first ? static_cast<std::int64_t>(b_first - a_first)
                                               : -static_cast<std::int64_t>(a_first - b_first);
  const std::int64_t distance = (diff % step + step) % step;
  return distance >= *inner_a && distance + *inner_b <= step;
}

}  // namespace

bool Tensor::shares_storage_with(const Tensor& other) const noexcept {
  // Byte span [first, last) of a view's elements, by address; empty for views with no data.
  auto span_of = [](const Tensor& t) -> std::pair<std::uintptr_t, std::uintptr_t> {
    if (!t.defined_ || t.data_ptr() == nullptr) return {0, 0};
    // A contiguous view spans exactly its elements; only strided views need the extent walk.
    std::optional<std::int64_t> extent = t.is_contiguous() ? std::optional<std::int64_t>(t.numel())
                                                           : strided_extent(t.shape_, t.strides_);
    if (!extent || *extent == 0) return {0, 0};
    const auto first = reinterpret_cast<std::uintptr_t>(t.data_ptr());
    return {first, first + static_cast<std::uintptr_t>(*extent) * t.itemsize()};
  };
  if (device_ != other.device_ || !storage_ || !other.storage_) return false;
  // Views of disjoint storage blocks cannot overlap: the common case, decided without walking
  // either view's geometry.
  if (storage_ != other.storage_) {
    const auto a = reinterpret_cast<std::uintptr_t>(storage_->data());
    const auto b = reinterpret_cast<std::uintptr_t>(other.storage_->data());
    if (a + storage_->nbytes() <= b || b + other.storage_->nbytes() <= a) return false;
  }
  const auto [a_first, a_last] = span_of(*this);
  const auto [b_first, b_last] = span_of(other);
  if (a_first == a_last || b_first == b_last) return false;
  if (!(a_first < b_last && b_first < a_last)) return false;
  return !in_disjoint_bands(*this, other, a_first, b_first);
}

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides,
                          std::int64_t byte_offset) const {
  constexpr const char* kWho = "Tensor::as_strided";
  if (!defined_) throw CheckError("Tensor::as_strided: the tensor is undefined");
  const std::int64_t extent = checked_extent(kWho, shape, strides);
  const auto itemsize = static_cast<std::int64_t>(this->itemsize());
  if (byte_offset < 0 || byte_offset % itemsize != 0) {
    throw CheckError("Tensor::as_strided: byte offset " + std::to_string(byte_offset) +
                     " is not a non-negative multiple of the element size " +
                     std::to_string(itemsize));
  }
  if (storage_) {
    std::int64_t end = 0;
    const std::int64_t extent_bytes = checked_extent_bytes(kWho, shape, strides, extent, dtype_);
    if (__builtin_add_overflow(byte_offset, extent_bytes, &end) ||
        static_cast<std::uint64_t>(end) > storage_->nbytes()) {
      throw CheckError("Tensor::as_strided: a view of shape " + shape.str() + " with strides " +
                       strides.str() + " at byte offset " + std::to_string(byte_offset) +
                       " reaches outside the storage of " + std::to_string(storage_->nbytes()) +
                       " bytes");
    }
  }
  Tensor view = *this;
  view.shape_ = shape;
  view.numel_ = shape.numel();
  view.strides_ = strides;
  view.contiguous_ = row_major(shape, strides);
  view.byte_offset_ = byte_offset;
  return view;
}

Tensor Tensor::contiguous() const {
  if (!defined_) throw CheckError("Tensor::contiguous: the tensor is undefined");
  if (is_contiguous()) return *this;
  if (is_meta()) return meta(shape_, dtype_);
  if (!device_.is_cpu()) {
    detail::DeviceRuntime* runtime = detail::device_runtime(device_.type);
    if (!runtime)
      throw OpNotAvailableError("Tensor::contiguous: copying a non-contiguous " + device_.str() +
                                " tensor is not available; only CPU tensors can be copied");
    Tensor out = empty(shape_, dtype_, device_);
    runtime->copy(out, *this);
    return out;
  }
  Tensor out = empty(shape_, dtype_, device_);
  copy_strided(static_cast<std::byte*>(data_ptr()), shape_, strides_, itemsize(),
               static_cast<std::byte*>(out.data_ptr()), /*gather=*/true);
  return out;
}

Tensor Tensor::to(Device device, DType dtype) const {
  if (!defined_) throw CheckError("Tensor::to: the tensor is undefined");
  if (device == device_ && dtype == dtype_) return *this;
  if (device.is_meta()) return meta(shape_, dtype);
  if (is_meta())
    throw CheckError("Tensor::to: a meta tensor has no values to copy to " + device.str());
  if (device.is_cpu() && device_.is_cpu()) {
    const Tensor packed = contiguous();
    Tensor out = empty(shape_, dtype, device);
    const auto* src = static_cast<const std::byte*>(packed.data_ptr());
    auto* dst = static_cast<std::byte*>(out.data_ptr());
    const std::size_t in_size = itemsize(), out_size = out.itemsize();
    for (std::int64_t i = 0, n = numel(); i < n; ++i)
      store_from_double(dtype, load_as_double(dtype_, src + i * in_size), dst + i * out_size);
    return out;
  }
  for (const Device side : {device_, device}) {
    if (!side.is_cpu() && !detail::device_runtime(side.type))
      throw OpNotAvailableError("Tensor::to: copying from " + device_.str() + " to " +
                                device.str() + " is not available; only CPU tensors can be copied");
  }
  // A device runtime moves bytes; a dtype conversion happens on the host, with the CPU path's
  // casts (a device tensor goes down, is converted, and comes up again).
  if (dtype != dtype_) {
    if (device_.is_cpu()) return to(device_, dtype).to(device, dtype);
    return to(Device::cpu(), dtype_).to(device, dtype);
  }
  Tensor out = empty(shape_, dtype, device);
  out.copy_from(*this);
  return out;
}

void Tensor::copy_from(const Tensor& src) {
  if (!defined_ || !src.defined_) throw CheckError("Tensor::copy_from: a tensor is undefined");
  if (src.shape_ != shape_ || src.dtype_ != dtype_)
    throw CheckError("Tensor::copy_from: the source has shape " + src.shape_.str() + " and dtype " +
                     std::string(dtype_name(src.dtype_)) + ", the destination " + shape_.str() +
                     " and " + std::string(dtype_name(dtype_)));
  detail::DeviceRuntime* runtime = nullptr;
  if (!device_.is_cpu() || !src.device_.is_cpu()) {
    const Device device = device_.is_cpu() ? src.device_ : device_;
    const Device other = device_.is_cpu() ? device_ : src.device_;
    if (!device.is_meta() && (other.is_cpu() || other.type == device.type))
      runtime = detail::device_runtime(device.type);
    if (!runtime) throw OpNotAvailableError("Tensor::copy_from: only CPU tensors can be copied");
  }
  if (read_only()) throw CheckError("Tensor::copy_from: the destination is read-only");
  if (numel() == 0) return;
  if (runtime) {
    // Overlapping views go through a private copy of the source, on the source's device.
    if (src.shares_storage_with(*this)) {
      Tensor staged = empty(shape_, dtype_, src.device_);
      runtime->copy(staged, src);
      runtime->copy(*this, staged);
    } else {
      runtime->copy(*this, src);
    }
    return;
  }
  Tensor packed = src.contiguous();
  if (packed.shares_storage_with(*this)) {  // overlapping views: go through a private buffer
    packed = empty(shape_, dtype_);
    copy_strided(static_cast<std::byte*>(src.data_ptr()), src.shape_, src.strides_, itemsize(),
                 static_cast<std::byte*>(packed.data_ptr()), /*gather=*/true);
  }
  copy_strided(static_cast<std::byte*>(data_ptr()), shape_, strides_, itemsize(),
               static_cast<std::byte*>(packed.data_ptr()), /*gather=*/false);
}

}  // namespace tileops
