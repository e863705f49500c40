// MulFwdOp's CUDA kernels (binary.cuh), every path and dtype.
#include "kernels/elementwise/cuda/binary_instances.cuh"

namespace tileops::kernels::cuda {

const void* mul_kernel(BinaryPath path, DType dtype) {
  return binary_kernel<BinaryKind::kMul>(path, dtype);
}

const void* mul_repeated_row_kernel(bool row_is_b, DType dtype) {
  return repeated_row_kernel<BinaryKind::kMul>(row_is_b, dtype);
}

const void* mul_row_scalar_kernel(bool scalar_is_b, DType dtype) {
  return row_scalar_kernel<BinaryKind::kMul>(scalar_is_b, dtype);
}

}  // namespace tileops::kernels::cuda
