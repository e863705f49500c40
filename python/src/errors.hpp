// The library's typed errors as Python exceptions (python/tileops/_errors.py defines the classes).
#pragma once

#include <nanobind/nanobind.h>

namespace tileops::python {

// Registers the translator and `_set_error_classes`, which __init__ calls with the classes.
void bind_errors(nanobind::module_& m);

}  // namespace tileops::python
