// ByteReader: a fuzz input read as the choices of one test case, for the op-call harness
// (op_call_harness.cpp). Choices come from the back of the input and fill bytes from the front,
// so that a mutation of one rarely shifts the other (as LLVM's FuzzedDataProvider does; ours
// builds with any compiler, which the corpus replay on a GPU machine without clang needs). Once the
// input runs out, every choice is its range's low end and fills are empty: any input, the empty
// one included, is a valid case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace tileops::fuzz {

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> data) : data_(data) {}

  // An integer in [lo, hi] from as few bytes of the back as the range needs.
  template <class T>
  T in_range(T lo, T hi) {
    static_assert(std::is_integral_v<T>);
    const auto range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    std::uint64_t value = 0;
    for (std::uint64_t seen = 0; seen < range && !data_.empty(); seen = (seen << 8) | 0xff) {
      value = (value << 8) | data_.back();
      data_ = data_.first(data_.size() - 1);
    }
    if (range != ~std::uint64_t{0}) value %= range + 1;
    return static_cast<T>(static_cast<std::uint64_t>(lo) + value);
  }
  // An index into a container of `size` (> 0) elements.
  std::size_t index(std::size_t size) { return in_range<std::size_t>(0, size - 1); }
  bool flag() { return in_range(0, 1) == 1; }
  // Up to `n` bytes from the front.
  std::span<const std::uint8_t> bytes(std::size_t n) {
    const std::span<const std::uint8_t> taken = data_.first(n < data_.size() ? n : data_.size());
    data_ = data_.subspan(taken.size());
    return taken;
  }

 private:
  std::span<const std::uint8_t> data_;
};

}  // namespace tileops::fuzz
