#include "values.hpp"

#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "tileops/core/error.hpp"

namespace nb = nanobind;

namespace tileops::python {

namespace {

// An integer (a Python int, or anything with __index__: NumPy's integer scalars) as int64; one past
// its range raises the library's CheckError naming the param, where nanobind's cast would raise a
// bare std::bad_cast.
std::int64_t int64_of(nb::handle o, const char* what) {
  const nb::object index = nb::steal(PyNumber_Index(o.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0)
    throw CheckError(
        fmt::format("{}: {} is past the range of int64", what, nb::str(index).c_str()));
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

// NumPy's bool scalar, which is neither a Python bool nor an integer (it has no __index__).
bool is_numpy_bool(nb::handle o) {
  const nb::handle type = o.type();
  const nb::object module = nb::getattr(type, "__module__", nb::none());
  if (!nb::isinstance<nb::str>(module) || nb::cast<std::string>(module) != "numpy") return false;
  const std::string name = nb::cast<std::string>(type.attr("__name__"));
  return name == "bool" || name == "bool_";  // NumPy 2's name, and NumPy 1's
}

// A number as a param value: a Python bool, int or float, or NumPy's scalars of those kinds
// (np.int64(-1), np.float32(1e-5), np.True_), as a caller holding NumPy values passes them.
// nullopt for anything else. Arrays are asked first (a 0-d integer tensor has __index__ too).
std::optional<Value> number_of(nb::handle o, const char* what) {
  PyObject* p = o.ptr();
  if (PyType_Check(p)) return std::nullopt;  // a class has __float__ as an attribute, not a value
  if (PyBool_Check(p) || is_numpy_bool(o)) return Value(PyObject_IsTrue(p) == 1);
  if (PyLong_Check(p) || PyIndex_Check(p)) return Value(int64_of(o, what));
  if (PyFloat_Check(p) || nb::hasattr(o, "__float__")) {
    const double value = PyFloat_AsDouble(p);
    if (value == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return Value(value);
  }
  return std::nullopt;
}

}  // namespace

Value to_value(nb::handle o, const char* what) {
  if (o.is_none()) return Value();
  if (PyUnicode_Check(o.ptr())) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(o.ptr(), &size);
    if (text == nullptr) {  // a lone surrogate, which UTF-8 cannot hold
      PyErr_Clear();
      throw CheckError(fmt::format("{}: {} is not a string of characters UTF-8 can hold", what,
                                   nb::repr(o).c_str()));
    }
    return Value(std::string(text, static_cast<std::size_t>(size)));
  }
  if (PyList_Check(o.ptr()) || PyTuple_Check(o.ptr())) {
    bool all_ints = true;
    std::vector<double> floats;
    Shape ints;
    for (nb::handle item : o) {
      const std::optional<Value> number =
          nb::hasattr(item, "__dlpack__") ? std::nullopt : number_of(item, what);
      if (number && number->is_bool())
        throw nb::type_error(fmt::format("{}: a list of bools is not a param value", what).c_str());
      if (!number)
        throw nb::type_error(fmt::format("{}: a list holds {}, not an int or a float", what,
                                         nb::inst_name(item).c_str())
                                 .c_str());
      if (number->is_int()) {
        ints.push_back(number->as_int());
        floats.push_back(static_cast<double>(ints.back()));
      } else {
        all_ints = false;
        floats.push_back(number->as_float());
      }
    }
    return all_ints ? Value(std::move(ints)) : Value(std::move(floats));
  }
  if (nb::hasattr(o, "__dlpack__") || PyCapsule_CheckExact(o.ptr()))
    return Value(import_array(o, what));
  if (std::optional<Value> number = number_of(o, what)) return std::move(*number);
  throw nb::type_error(fmt::format("{}: a {} is not a param value (None, bool, int, float, str, a "
                                   "list of numbers or an array)",
                                   what, nb::inst_name(o).c_str())
                           .c_str());
}

nb::object from_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone:
      return nb::none();
    case Value::Kind::kBool:
      return nb::bool_(v.as_bool());
    case Value::Kind::kInt:
      return nb::int_(v.as_int());
    case Value::Kind::kFloat:
      return nb::float_(v.as_float());
    case Value::Kind::kStr:
      return nb::str(v.as_str().c_str());
    case Value::Kind::kDType:
      return nb::str(std::string(dtype_name(v.as_dtype())).c_str());
    case Value::Kind::kIntList: {
      nb::list items;
      for (std::int64_t i : v.as_int_list()) items.append(i);
      return nb::tuple(items);
    }
    case Value::Kind::kFloatList: {
      nb::list items;
      for (double d : v.as_float_list()) items.append(d);
      return nb::tuple(items);
    }
    case Value::Kind::kTensor:
      return nb::cast(DLPackTensor{v.as_tensor()});
    case Value::Kind::kTuple:
      return nb::str(v.repr().c_str());
  }
  return nb::none();
}

}  // namespace tileops::python
