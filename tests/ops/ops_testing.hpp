// Helpers for the tests of the ops through the framework (test_*_ops.cpp and the generic suite):
// strided read-back, non-contiguous random inputs, CUDA descriptors over host memory and
// typed-error checks. The float64 oracles are the references (references/); the comparison
// helpers come from cpu_numerics.hpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu_numerics.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"

namespace tileops::test_ops {

using test_cpu::all_close;
using test_cpu::kFloatDTypes;
using test_cpu::poisoned_tensor;
using test_cpu::random_tensor;
using test_cpu::still_poisoned;
using test_cpu::tolerance_for;

// Contiguous byte offsets of t's elements in row-major logical order.
inline std::vector<std::int64_t> element_offsets(const Tensor& t) {
  std::vector<std::int64_t> offsets;
  offsets.reserve(static_cast<std::size_t>(t.numel()));
  if (t.numel() == 0) return offsets;
  const std::size_t rank = t.dim();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t e = 0; e < t.numel(); ++e) {
    std::int64_t off = 0;
    for (std::size_t a = 0; a < rank; ++a) off += index[a] * t.strides()[a];
    offsets.push_back(off * static_cast<std::int64_t>(t.itemsize()));
    for (std::size_t a = rank; a-- > 0;) {
      if (++index[a] < t.shape()[a]) break;
      index[a] = 0;
    }
  }
  return offsets;
}

// Elements of t (any strides) as doubles, in row-major logical order.
inline std::vector<double> read(const Tensor& t) {
  std::vector<double> values;
  const auto* base = static_cast<const unsigned char*>(t.data_ptr());
  for (std::int64_t off : element_offsets(t))
    values.push_back(load_as_double(t.dtype(), base + off));
  return values;
}

// Writes `values` (row-major logical order) into t (any strides).
inline void write(const Tensor& t, const std::vector<double>& values) {
  auto* base = static_cast<unsigned char*>(t.data_ptr());
  std::size_t i = 0;
  for (std::int64_t off : element_offsets(t)) store_from_double(t.dtype(), values[i++], base + off);
}

// Random normal values kept away from zero (|v| >= 0.05 * scale), as cpu_numerics' fill_normal.
inline std::vector<double> normal_values(std::int64_t n, std::uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) {
    x = normal(rng);
    if (std::abs(x) < 0.05) x = x < 0 ? -0.05 : 0.05;
    x *= scale;
  }
  return v;
}

// How a non-contiguous view lays out its elements.
enum class Layout {
  kStrided,     // every other element of the last axis (a stride-2 slice)
  kTransposed,  // a permuted view: the storage holds the axes in reverse order
};

// A non-contiguous view of `shape` (rank >= 1) filled with random values; the storage around the
// view's elements is poisoned, so a kernel that reads the storage as contiguous sees NaNs.
inline Tensor noncontiguous_random(const Shape& shape, DType dtype, std::uint32_t seed,
                                   Layout layout, double scale = 1.0) {
  const std::size_t rank = shape.size();
  Shape base_shape = shape;
  Shape strides = Shape::filled(rank, 0);
  if (layout == Layout::kStrided) {
    base_shape[rank - 1] = 2 * shape[rank - 1];
    std::int64_t s = 1;
    for (std::size_t a = rank; a-- > 0;) {
      strides[a] = s;
      s *= base_shape[a];
    }
    strides[rank - 1] = 2;
  } else {
    std::int64_t s = 1;
    for (std::size_t a = 0; a < rank; ++a) {
      strides[a] = s;
      s *= shape[a];
    }
  }
  Tensor base = Tensor::empty(base_shape, dtype);
  test_cpu::poison(base);
  Tensor view = base.as_strided(shape, strides, 0);
  write(view, normal_values(view.numel(), seed, scale));
  return view;
}

// A CUDA tensor descriptor over host memory the returned holder owns (never dereferenced on a
// device: the tests only check that nothing runs and nothing is written). Only for ops without
// CUDA kernels (has_cuda_kernels): where a CUDA kernel serves cuda:0 it would read host memory.
// tests/cuda covers CUDA inputs, refusals and bad devices with real device memory.
struct CudaDescriptor {
  std::shared_ptr<std::vector<unsigned char>> bytes;
  Tensor tensor;
};

inline CudaDescriptor cuda_descriptor(const Shape& shape, DType dtype) {
  auto bytes = std::make_shared<std::vector<unsigned char>>(
      static_cast<std::size_t>(std::max<std::int64_t>(shape.numel(), 1)) * dtype_size(dtype), 0xAB);
  Shape strides = Shape::filled(shape.size(), 1);
  for (std::size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * shape[a];
  return {bytes, Tensor::from_blob(bytes->data(), shape, strides, dtype, Device::cuda(0), bytes)};
}

// True when the op has in-tree CUDA implementations (a CUDA build).
inline bool has_cuda_kernels(const Op& op) {
  for (const KernelType& k : op.op_class().kernel_types())
    if (std::find(k.devices.begin(), k.devices.end(), DeviceType::kCUDA) != k.devices.end())
      return true;
  return false;
}

inline bool all_bytes_are(const std::vector<unsigned char>& bytes, unsigned char value) {
  for (unsigned char b : bytes)
    if (b != value) return false;
  return true;
}

// Runs f, expecting an exception of type E whose message is exactly `message`.
template <class E>
::testing::AssertionResult throws_with(const std::function<void()>& f, const std::string& message) {
  try {
    f();
  } catch (const E& e) {
    if (e.what() == message) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "message \"" << e.what() << "\", expected \"" << message << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

// Runs f, expecting an exception of type E whose message contains `part`.
template <class E>
::testing::AssertionResult throws_containing(const std::function<void()>& f,
                                             const std::string& part) {
  try {
    f();
  } catch (const E& e) {
    if (std::string(e.what()).find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "message \"" << e.what() << "\" lacks \"" << part << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

// Bytes the derived roofline counts for a tensor.
inline std::int64_t nbytes(const Shape& shape, DType dtype) {
  return shape.numel() * static_cast<std::int64_t>(dtype_size(dtype));
}

}  // namespace tileops::test_ops
