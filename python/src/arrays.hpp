// Tensors in and out of Python through the DLPack capsule protocol (Note [Python arrays] in
// arrays.cpp): any object with __dlpack__ (torch, NumPy, CuPy, JAX) imports without a copy, and a
// result exports as a DLPackTensor that the caller's framework turns into its own array.
#pragma once

#include <nanobind/nanobind.h>

#include "tileops/core/tensor.hpp"

namespace tileops::python {

// The tensor behind `array` (an object with __dlpack__, or a DLPack capsule), sharing its memory.
// TypeError for anything else; DLPackError for a tensor the library cannot represent.
Tensor import_array(nanobind::handle array, const char* what);

// A library tensor on its way out: an object with __dlpack__ and __dlpack_device__.
struct DLPackTensor {
  Tensor tensor;
};

void bind_arrays(nanobind::module_& m);

}  // namespace tileops::python
