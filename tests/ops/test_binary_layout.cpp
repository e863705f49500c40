// Which kernel of the CUDA rows path serves a broadcast (rows_kernel in
// kernels/elementwise/binary_layout.hpp): decided on the host from the merged layout, so it is
// pinned here on the CPU, every pattern and view beside the one it must not be mistaken for.
#include <gtest/gtest.h>

#include <string>

#include "common/test_helpers.hpp"
#include "kernels/elementwise/binary_layout.hpp"
#include "tileops/core/tensor.hpp"

namespace tileops {
namespace {

using kernels::RowsKernel;

struct Expected {
  RowsKernel kernel;
  bool b = true;
};

std::string name(RowsKernel k) {
  switch (k) {
    case RowsKernel::kTiles:
      return "tiles";
    case RowsKernel::kRepeatedRow:
      return "repeated row";
    case RowsKernel::kRowScalar:
      return "row scalar";
  }
  return "?";
}

void expect_kernel(const Tensor& a, const Tensor& b, Expected want) {
  SCOPED_TRACE(a.shape().str() + " with " + b.shape().str());
  kernels::BinaryLayout layout;
  ASSERT_TRUE(
      kernels::binary_layout(a, b, test_common::broadcast_shape(a.shape(), b.shape()), layout));
  const kernels::RowsChoice got = kernels::rows_kernel(layout);
  EXPECT_EQ(name(got.kernel), name(want.kernel));
  if (want.kernel != RowsKernel::kTiles) {
    EXPECT_EQ(got.b, want.b);
  }
}

Tensor dense(const Shape& shape) { return Tensor::empty(shape, DType::kBFloat16); }

TEST(BinaryRowsKernel, ARowRepeatedOverAContiguousInput) {
  expect_kernel(dense({33, 128}), dense({128}), {RowsKernel::kRepeatedRow, true});
  expect_kernel(dense({128}), dense({33, 128}), {RowsKernel::kRepeatedRow, false});
  expect_kernel(dense({9, 4096}), dense({1, 4096}), {RowsKernel::kRepeatedRow, true});
  // [3, 5, 64] + [64]: the leading axes merge into one run of rows.
  expect_kernel(dense({3, 5, 64}), dense({64}), {RowsKernel::kRepeatedRow, true});
  // torch's expand: the row as a stride-0 view.
  const Tensor row = dense({128});
  expect_kernel(row.as_strided({9, 128}, {0, 1}, 0), dense({9, 128}),
                {RowsKernel::kRepeatedRow, false});
}

TEST(BinaryRowsKernel, AValuePerRowBesideAnInputLaidOutLikeTheOutput) {
  expect_kernel(dense({33, 128}), dense({33, 1}), {RowsKernel::kRowScalar, true});
  expect_kernel(dense({33, 1}), dense({33, 128}), {RowsKernel::kRowScalar, false});
  expect_kernel(dense({2, 16, 8, 8}), dense({16, 1, 1}), {RowsKernel::kRowScalar, true});
  expect_kernel(dense({2, 16, 8, 8}), dense({1, 16, 1, 1}), {RowsKernel::kRowScalar, true});
  expect_kernel(dense({16, 1, 1}), dense({2, 16, 8, 8}), {RowsKernel::kRowScalar, false});
  // The values read at a stride of 2: any outer strides serve.
  const Tensor column = dense({66});
  expect_kernel(dense({33, 128}), column.as_strided({33, 1}, {2, 1}, 0),
                {RowsKernel::kRowScalar, true});
}

TEST(BinaryRowsKernel, EverythingElseKeepsTheTiles) {
  // Rows of a slice 256 apart are no single run: not a repeated row.
  const Tensor wide = dense({33, 256});
  const Tensor half = wide.as_strided({33, 128}, {256, 1}, 128 * 2);  // byte offset
  expect_kernel(half, dense({128}), {RowsKernel::kTiles});
  expect_kernel(half, dense({33, 128}), {RowsKernel::kTiles});
  // Every other channel of a feature map: its channels are not the output's stride apart.
  const Tensor maps = dense({2, 16, 4, 16});
  expect_kernel(maps.as_strided({2, 8, 4, 16}, {1024, 128, 16, 1}, 0), dense({8, 1, 1}),
                {RowsKernel::kTiles});
  // A transposed input steps through its rows with a stride.
  const Tensor base = dense({256, 33});
  expect_kernel(base.as_strided({33, 256}, {1, 33}, 0), dense({256}), {RowsKernel::kTiles});
  // Both inputs broadcast, and a scalar (one merged axis, no rows to repeat).
  expect_kernel(dense({128}), dense({33, 1}), {RowsKernel::kTiles});
  expect_kernel(dense({4, 1, 7}), dense({5, 1}), {RowsKernel::kTiles});
  expect_kernel(dense({33, 128}), dense({}), {RowsKernel::kTiles});
  // A value per row beside a row: neither input is laid out like the output.
  expect_kernel(dense({33, 1}), dense({128}), {RowsKernel::kTiles});
}

}  // namespace
}  // namespace tileops
