// AddFwdOp's CUDA kernels (binary.cuh), every path and dtype.
#include "kernels/elementwise/cuda/binary_instances.cuh"

namespace tileops::kernels::cuda {

const void* add_kernel(BinaryPath path, DType dtype) {
  return binary_kernel<BinaryKind::kAdd>(path, dtype);
}

const void* add_repeated_row_kernel(bool row_is_b, DType dtype) {
  return repeated_row_kernel<BinaryKind::kAdd>(row_is_b, dtype);
}

const void* add_row_scalar_kernel(bool scalar_is_b, DType dtype) {
  return row_scalar_kernel<BinaryKind::kAdd>(scalar_is_b, dtype);
}

}  // namespace tileops::kernels::cuda
