#include "values.hpp"

#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "tileops/core/error.hpp"

namespace nb = nanobind;

namespace tileops::python {

namespace {

// A Python int as int64; one past its range raises the library's CheckError naming the param,
// where nanobind's cast would raise a bare std::bad_cast.
std::int64_t int64_of(nb::handle o, const char* what) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
  if (overflow != 0)
    throw CheckError(fmt::format("{}: {} is past the range of int64", what, nb::str(o).c_str()));
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

}  // namespace

Value to_value(nb::handle o, const char* what) {
  if (o.is_none()) return Value();
  // bool before int: Python's bool is an int.
  if (PyBool_Check(o.ptr())) return Value(o.ptr() == Py_True);
  if (PyLong_Check(o.ptr())) return Value(int64_of(o, what));
  if (PyFloat_Check(o.ptr())) return Value(nb::cast<double>(o));
  if (PyUnicode_Check(o.ptr())) return Value(nb::cast<std::string>(o));
  if (PyList_Check(o.ptr()) || PyTuple_Check(o.ptr())) {
    bool all_ints = true;
    std::vector<double> floats;
    Shape ints;
    for (nb::handle item : o) {
      if (PyBool_Check(item.ptr()))
        throw nb::type_error(fmt::format("{}: a list of bools is not a param value", what).c_str());
      if (PyLong_Check(item.ptr())) {
        ints.push_back(int64_of(item, what));
        floats.push_back(static_cast<double>(ints.back()));
      } else if (PyFloat_Check(item.ptr())) {
        all_ints = false;
        floats.push_back(nb::cast<double>(item));
      } else {
        throw nb::type_error(fmt::format("{}: a list holds {}, not an int or a float", what,
                                         nb::inst_name(item).c_str())
                                 .c_str());
      }
    }
    return all_ints ? Value(std::move(ints)) : Value(std::move(floats));
  }
  if (nb::hasattr(o, "__dlpack__") || PyCapsule_CheckExact(o.ptr()))
    return Value(import_array(o, what));
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
