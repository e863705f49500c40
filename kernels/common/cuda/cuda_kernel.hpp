// CudaKernel: the common shape of an in-tree CUDA implementation (compiled only in CUDA builds) —
// available on CUDA devices of the architectures it was compiled for, one entry per call spec,
// built on the call's device (the framework makes it current for the build). An implementation
// adds its precedence, its refusal, what it plans at build and its forward().
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

// The architectures the CUDA kernels are compiled for (Note [CUDA build] in CMakeLists.txt):
// sm_90a code runs on compute capability 9.0 only.
inline std::vector<int> cuda_kernel_archs() { return {90}; }

template <class Impl, class I>
class CudaKernel : public Kernel, public I {
 public:
  using Interface = I;
  using Call = typename I::Call;

  static std::vector<DeviceType> devices() { return {DeviceType::kCUDA}; }
  static std::optional<std::vector<int>> supported_archs() { return cuda_kernel_archs(); }
  static EntryRecipe<I> entry_for(const Call& call) { return entry_per_call<Impl>(call); }

  explicit CudaKernel(const Call& call) : call_(call) {}

 protected:
  Call call_;
};

// The refusal of a kernel that reads and writes through 16-byte vectors: every pointer it receives
// must be 16-byte aligned (the call's access class; a misaligned view is refused, never read
// wrongly), and so must every row that starts `row_bytes` after another (0: no rows).
inline std::optional<std::string> vector_access_refusal(std::uint8_t alignment,
                                                        std::int64_t row_bytes) {
  if (alignment < 16)
    return fmt::format("reads 16-byte vectors and the call's pointers are aligned to {} bytes",
                       alignment);
  if (row_bytes % 16 != 0)
    return fmt::format("reads 16-byte vectors and rows of {} bytes are not all 16-byte aligned",
                       row_bytes);
  return std::nullopt;
}

}  // namespace tileops::kernels
