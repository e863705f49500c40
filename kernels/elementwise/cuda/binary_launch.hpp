// The binary elementwise kernels as the adapters see them (no CUDA header): a plan made once per
// entry, and a launch per call.
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops::kernels::cuda {

enum class BinaryOp { kAdd, kMul };

// The kernels of Note [Binary kernels] in binary.cuh.
enum class BinaryPath { kVector, kRows, kGeneral };

// What an entry builds once, on its device.
struct BinaryLaunch {
  const void* kernel = nullptr;  // the instantiation for (op, path, dtype)
  BinaryPath path = BinaryPath::kGeneral;
  // The rows path's repeated-row kernels (Note [Binary kernels] in binary.cuh): [0] where a is
  // the row, [1] where b is; null on the other paths.
  const void* repeated_row[2] = {nullptr, nullptr};
  // Its row-scalar kernels: [0] where a holds a value per row, [1] where b does.
  const void* row_scalar[2] = {nullptr, nullptr};
};
// Plans `path` of `op` for `dtype` on the current device (the grid is one block per chunk of the
// call's work, Note [Binary kernels] in binary.cuh, whatever the device's size).
BinaryLaunch plan_binary(BinaryOp op, BinaryPath path, DType dtype);

// out = a + alpha * b (kAdd) or a * b (kMul), launched on `stream` (a cudaStream_t) of the current
// device; a and b broadcast to out's shape and may be views of any strides, out is contiguous.
// The path serves the call (its refusal said so). `alpha` is read as a float for float dtypes and
// `alpha_int` for integer dtypes. An empty out launches nothing.
void launch_binary(const BinaryLaunch& launch, const Tensor& a, const Tensor& b, double alpha,
                   std::int64_t alpha_int, Tensor& out, void* stream);

// The instantiations of one op (binary_add.cu, binary_mul.cu); the rows path's repeated-row and
// row-scalar kernels, where `row_is_b` / `scalar_is_b` says which input is the row or the values.
const void* add_kernel(BinaryPath path, DType dtype);
const void* mul_kernel(BinaryPath path, DType dtype);
const void* add_repeated_row_kernel(bool row_is_b, DType dtype);
const void* mul_repeated_row_kernel(bool row_is_b, DType dtype);
const void* add_row_scalar_kernel(bool scalar_is_b, DType dtype);
const void* mul_row_scalar_kernel(bool scalar_is_b, DType dtype);

}  // namespace tileops::kernels::cuda
