// Shape: a list of axis lengths (also used for strides). Up to kInlineRank axes live inline, so a
// call on tensors of ordinary rank allocates nothing on the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace tileops {

class Shape {
 public:
  static constexpr std::size_t kInlineRank = 6;

  Shape() noexcept = default;
  Shape(std::initializer_list<std::int64_t> dims) { assign(dims.begin(), dims.size()); }
  explicit Shape(std::span<const std::int64_t> dims) { assign(dims.data(), dims.size()); }
  // rank axes, each `fill`.
  static Shape filled(std::size_t rank, std::int64_t fill) {
    Shape s;
    s.resize(rank, fill);
    return s;
  }

  Shape(const Shape& other) { copy_from(other); }
  Shape(Shape&& other) noexcept { steal(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) steal(other);
    return *this;
  }
  ~Shape() = default;

  std::size_t size() const noexcept { return size_; }
  std::size_t rank() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  const std::int64_t* data() const noexcept { return heap_ ? heap_.get() : inline_; }
  std::int64_t* data() noexcept { return heap_ ? heap_.get() : inline_; }
  const std::int64_t* begin() const noexcept { return data(); }
  const std::int64_t* end() const noexcept { return data() + size_; }
  std::int64_t* begin() noexcept { return data(); }
  std::int64_t* end() noexcept { return data() + size_; }

  std::int64_t operator[](std::size_t i) const noexcept { return data()[i]; }
  std::int64_t& operator[](std::size_t i) noexcept { return data()[i]; }
  std::int64_t back() const noexcept { return data()[size_ - 1]; }

  std::span<const std::int64_t> span() const noexcept { return {data(), size_}; }
  operator std::span<const std::int64_t>() const noexcept { return span(); }

  void push_back(std::int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void append(std::span<const std::int64_t> dims) {
    reserve(size_ + dims.size());
    std::copy(dims.begin(), dims.end(), data() + size_);
    size_ += dims.size();
  }
  void resize(std::size_t n, std::int64_t fill = 0) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data()[i] = fill;
    size_ = n;
  }
  void clear() noexcept { size_ = 0; }

  // Product of the axes (1 for rank 0). Callers that need overflow safety use checked_numel().
  std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (std::int64_t d : *this) n *= d;
    return n;
  }
  // Product of the axes; nullopt when an axis is negative or the product overflows int64.
  std::optional<std::int64_t> checked_numel() const noexcept;

  // "[2, 3, 4]".
  std::string str() const;

  // An inline loop: ranks are small, and the memcmp calls std::equal made were 3-4% of a
  // cache-hit op call, which compares several shapes.
  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.size_ != b.size_) return false;
    const std::int64_t* pa = a.data();
    const std::int64_t* pb = b.data();
    for (std::size_t i = 0; i < a.size_; ++i)
      if (pa[i] != pb[i]) return false;
    return true;
  }

 private:
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    std::size_t cap = std::max(n, capacity_ * 2);
    auto grown = std::make_unique<std::int64_t[]>(cap);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    capacity_ = cap;
  }
  void assign(const std::int64_t* src, std::size_t n) {
    if (n > capacity_) {
      heap_ = std::make_unique<std::int64_t[]>(n);
      capacity_ = n;
    }
    std::copy(src, src + n, data());
    size_ = n;
  }
  // Between two inline shapes the whole inline array is copied: a fixed-size copy the compiler
  // turns into a few moves, cheaper on the call path than a length-dependent one.
  void copy_from(const Shape& other) {
    if (!other.heap_ && !heap_) {
      std::memcpy(inline_, other.inline_, sizeof(inline_));
      size_ = other.size_;
    } else {
      assign(other.data(), other.size_);
    }
  }
  void steal(Shape& other) noexcept {
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
    } else {
      heap_.reset();
      capacity_ = kInlineRank;
      std::memcpy(inline_, other.inline_, sizeof(inline_));
    }
    size_ = other.size_;
    other.size_ = 0;
    other.capacity_ = kInlineRank;
  }

  std::int64_t inline_[kInlineRank] = {};
  std::unique_ptr<std::int64_t[]> heap_;
  std::size_t size_ = 0;
  std::size_t capacity_ = kInlineRank;
};

// Row-major strides of a contiguous tensor of `shape`, in elements.
Shape contiguous_strides(const Shape& shape);

// Elements a strided view spans from its first element through its last:
// 1 + sum((shape[i] - 1) * strides[i]), or 0 when an axis is empty. nullopt when the ranks
// differ, a length or stride is negative, or the sum overflows int64. Negative strides are not
// part of the view model (Note [No negative strides] in tensor.hpp).
std::optional<std::int64_t> strided_extent(const Shape& shape, const Shape& strides) noexcept;

// Whether two elements of a view with these lengths and (non-negative) strides lie at one offset
// (Note [Internal overlap] in shape.cpp). The shape and strides are those of a valid view (equal
// ranks, extent within int64). True means proven; false, that no overlap was found: the search
// for an overlap that neither a stride-0 axis nor a pigeonhole count shows gives up after bounded
// work on views built to defeat it, as PyTorch gives up on every such view.
bool elements_overlap(const Shape& shape, const Shape& strides) noexcept;

}  // namespace tileops
