// Python objects as the library's Values and back: construction params and what records hold.
#pragma once

#include <nanobind/nanobind.h>

#include "tileops/core/value.hpp"

namespace tileops::python {

// None, bool, int, float, str, a list or tuple of ints (a shape, list[int]) or of numbers
// (list[float]), and arrays (construction-time tensors, through DLPack). TypeError otherwise,
// naming `what`.
Value to_value(nanobind::handle object, const char* what);

// The Python value of `v`: None, bool, int, float, str, tuple of ints, tuple of floats; a dtype
// as its name; a tensor as a DLPackTensor.
nanobind::object from_value(const Value& v);

}  // namespace tileops::python
