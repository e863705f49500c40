// tileops._C: the nanobind extension of the Python package (python/tileops/__init__.py builds the
// op classes from it).
#include <nanobind/nanobind.h>

#include "arrays.hpp"
#include "errors.hpp"
#include "streams.hpp"

namespace tileops::python {
void bind_ops(nanobind::module_& m);
void bind_targets(nanobind::module_& m);
}  // namespace tileops::python

NB_MODULE(_C, m) {
  m.doc() = "The C++ core of tileops: op instances, DLPack exchange and typed errors.";
  // torch.compile keeps the op objects it traced in its caches until the interpreter has torn
  // down the module, so nanobind's end-of-process leak report would list them: it is off.
  nanobind::set_leak_warnings(false);
  tileops::python::bind_errors(m);
  tileops::python::bind_arrays(m);
  tileops::python::bind_ops(m);
  tileops::python::bind_targets(m);
  tileops::python::bind_streams(m);
}
