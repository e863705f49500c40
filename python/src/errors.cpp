// C++ exceptions become the Python classes of python/tileops/_errors.py, most derived first, with
// the C++ message unchanged. The classes are defined in Python because some derive from two
// builtins (ContractError is a TypeError and a ValueError), which nanobind's exception binding
// cannot declare.
#include "errors.hpp"

#include <exception>
#include <string>

#include "tileops/core/error.hpp"

namespace nb = nanobind;

namespace tileops::python {
namespace {

// The Python class of each C++ error, filled once by _set_error_classes; strong references that
// live as long as the module.
struct ErrorClasses {
  nb::object check, contract, manifest, eval, backend, unknown_target, ambiguous_target,
      not_available, selection, runtime_state, dlpack, cuda, base;
};

ErrorClasses& classes() {
  static auto* c = new ErrorClasses();  // never destroyed: the interpreter may outlive statics
  return *c;
}

void raise(const nb::object& cls, const char* message) {
  PyErr_SetString(cls.is_valid() ? cls.ptr() : PyExc_RuntimeError, message);
}

void translate(const std::exception_ptr& p, void*) {
  const ErrorClasses& c = classes();
  try {
    std::rethrow_exception(p);
  } catch (const UnknownTargetError& e) {
    raise(c.unknown_target, e.what());
  } catch (const AmbiguousTargetError& e) {
    raise(c.ambiguous_target, e.what());
  } catch (const OpNotAvailableError& e) {
    raise(c.not_available, e.what());
  } catch (const BackendError& e) {
    raise(c.backend, e.what());
  } catch (const CheckError& e) {
    raise(c.check, e.what());
  } catch (const ContractError& e) {
    raise(c.contract, e.what());
  } catch (const ManifestError& e) {
    raise(c.manifest, e.what());
  } catch (const EvalError& e) {
    raise(c.eval, e.what());
  } catch (const SelectionError& e) {
    raise(c.selection, e.what());
  } catch (const RuntimeStateError& e) {
    raise(c.runtime_state, e.what());
  } catch (const DLPackError& e) {
    raise(c.dlpack, e.what());
  } catch (const CudaError& e) {
    raise(c.cuda, e.what());
  } catch (const Error& e) {
    raise(c.base, e.what());
  }
  // Anything else propagates to nanobind's own translators.
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::register_exception_translator(&translate);
  m.def("_set_error_classes", [](nb::dict d) {
    ErrorClasses& c = classes();
    auto get = [&](const char* name) { return nb::borrow<nb::object>(d[name]); };
    c.check = get("CheckError");
    c.contract = get("ContractError");
    c.manifest = get("ManifestError");
    c.eval = get("EvalError");
    c.backend = get("BackendError");
    c.unknown_target = get("UnknownTargetError");
    c.ambiguous_target = get("AmbiguousTargetError");
    c.not_available = get("OpNotAvailableError");
    c.selection = get("SelectionError");
    c.runtime_state = get("RuntimeStateError");
    c.dlpack = get("DLPackError");
    c.cuda = get("CudaError");
    c.base = get("Error");
  });
}

}  // namespace tileops::python
