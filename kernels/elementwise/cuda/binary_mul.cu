// MulFwdOp's CUDA kernels (binary.cuh), every path and dtype.
#include "kernels/elementwise/cuda/binary_instances.cuh"

namespace tileops::kernels::cuda {

const void* mul_kernel(BinaryPath path, DType dtype) {
  return binary_kernel<BinaryKind::kMul>(path, dtype);
}

}  // namespace tileops::kernels::cuda
