// CpuKernel: the common shape of a CPU implementation — available on the CPU, one entry per call
// spec, the spec kept for forward(). An implementation adds its precedence, its refusal and its
// forward().
#pragma once

#include <vector>

#include "tileops/op/kernel.hpp"

namespace tileops::kernels {

template <class Impl, class I>
class CpuKernel : public Kernel, public I {
 public:
  using Interface = I;
  using Call = typename I::Call;

  static std::vector<DeviceType> devices() { return {DeviceType::kCPU}; }
  static EntryRecipe<I> entry_for(const Call& call) { return entry_per_call<Impl>(call); }

  explicit CpuKernel(const Call& call) : call_(call) {}

 protected:
  Call call_;
};

}  // namespace tileops::kernels
