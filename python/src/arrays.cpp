// Note [Python arrays]
// Import: the producer's __dlpack__ is asked for a versioned capsule (max_version=(1, 1)) and,
// when it does not take that keyword (older producers), for a legacy one. The capsule's managed
// tensor goes to from_dlpack, which takes ownership on success; the capsule is then renamed
// "used_..." so that its destructor leaves the tensor alone, as the protocol says. Before that the
// managed tensor's deleter is wrapped: the producer's deleter may touch Python objects (NumPy's
// drops a reference to the array), and the library may drop its last reference on any thread,
// with or without the GIL, so the wrapper takes the GIL around it (and skips it once the
// interpreter is finalising, when nothing may run Python).
// Export: DLPackTensor hands out a fresh capsule per __dlpack__ call, versioned when the consumer
// asks for version 1 or later, legacy otherwise; a capsule nobody consumed frees its tensor in its
// destructor. Streams: CPU tensors need no synchronisation; the `stream` argument is accepted and
// ignored for them; CUDA ones follow Note [Python streams] in streams.cpp.
#include "arrays.hpp"

#include <Python.h>
#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "../torch_kernel/lazy_bits.hpp"
#include "streams.hpp"
#include "tileops/core/dlpack.hpp"
#include "tileops/core/error.hpp"

namespace nb = nanobind;

namespace tileops::python {
namespace {

constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kLegacy = "dltensor";

// The producer's deleter and context, run with the GIL held.
template <class Managed>
struct GilDeleter {
  void (*deleter)(Managed*);
  void* context;

  static void run(Managed* managed) {
    auto* self = static_cast<GilDeleter*>(managed->manager_ctx);
    managed->manager_ctx = self->context;
    const auto deleter = self->deleter;
    delete self;
    if (deleter == nullptr || !Py_IsInitialized()) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    deleter(managed);
    PyGILState_Release(state);
  }

  static void wrap(Managed* managed) {
    managed->manager_ctx = new GilDeleter{managed->deleter, managed->manager_ctx};
    managed->deleter = &GilDeleter::run;
  }
  // Undoes wrap when the import failed and the capsule keeps the tensor.
  static void unwrap(Managed* managed) {
    auto* self = static_cast<GilDeleter*>(managed->manager_ctx);
    managed->manager_ctx = self->context;
    managed->deleter = self->deleter;
    delete self;
  }
};

template <class Managed>
Tensor take_capsule(PyObject* capsule, const char* name, const char* used_name) {
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed == nullptr) throw nb::python_error();
  GilDeleter<Managed>::wrap(managed);
  Tensor tensor;
  try {
    tensor = from_dlpack(managed);
  } catch (...) {
    GilDeleter<Managed>::unwrap(managed);
    throw;
  }
  PyCapsule_SetName(capsule, used_name);
  return tensor;
}

// torch.Tensor and torch's C functions, once tileops._torch registered them (Note [Python
// streams] in streams.cpp: a torch tensor's __dlpack__ spends microseconds of Python on a stream
// handshake that a call on torch's current stream never needs): torch._C._to_dlpack and
// _from_dlpack, and the current raw CUDA stream's reader (None without CUDA).
struct TorchExport {
  PyTypeObject* tensor_type = nullptr;
  nb::object to_dlpack, from_dlpack, current_stream;
  // The bridge's functions (Note [The torch bridge] in python/torch_kernel/python_bridge.cpp),
  // once the package loaded the library that lends them; null before.
  int (*unpack)(PyObject*, void*) = nullptr;
  PyObject* (*wrap)(const void*) = nullptr;
  std::intptr_t (*native_stream)(int) = nullptr;
  void (*bump_version)(PyObject*) = nullptr;
};

TorchExport& torch_export() {
  static auto* e = new TorchExport;  // Never destroyed: Python objects outlive static teardown.
  return *e;
}

// The capsule of a torch tensor through torch's C function, or an empty object when `array` is no
// torch tensor or requires grad (whose __dlpack__ raises torch's own error, kept).
nb::object torch_capsule(nb::handle array) {
  const TorchExport& e = torch_export();
  if (e.tensor_type == nullptr || !PyObject_TypeCheck(array.ptr(), e.tensor_type)) return {};
  if (nb::cast<bool>(array.attr("requires_grad"))) return {};
  return e.to_dlpack(array);
}

// Why a torch tensor's memory does not hold its values (lazy_bits.hpp); nullptr for a tensor
// without a lazy bit and for anything that is no torch tensor.
const char* torch_lazy_bit(nb::handle array) {
  const TorchExport& e = torch_export();
  if (e.tensor_type == nullptr || !PyObject_TypeCheck(array.ptr(), e.tensor_type)) return nullptr;
  if (nb::cast<bool>(array.attr("is_neg")())) return torch_kernel::kNegativeBit;
  if (nb::cast<bool>(array.attr("is_conj")())) return torch_kernel::kConjugateBit;
  return nullptr;
}

// Whether `array` says (__dlpack_device__) that it lives on a CUDA device.
bool on_cuda(nb::handle array) {
  if (!nb::hasattr(array, "__dlpack_device__")) return false;
  const nb::tuple device = nb::borrow<nb::tuple>(array.attr("__dlpack_device__")());
  return nb::cast<int>(device[0]) == static_cast<int>(dlpack::kDLCUDA);
}

nb::object capsule_of(nb::handle array, const char* what, std::optional<std::intptr_t> stream) {
  if (PyCapsule_CheckExact(array.ptr())) return nb::borrow(array);
  if (!nb::hasattr(array, "__dlpack__"))
    throw nb::type_error(fmt::format("{} is a {}, which has no __dlpack__: tileops takes arrays "
                                     "that implement the DLPack protocol (torch, NumPy, CuPy, JAX)",
                                     what, nb::inst_name(array).c_str())
                             .c_str());
  if (const char* bit = torch_lazy_bit(array))
    throw DLPackError(fmt::format("{} has {}", what, bit));
  try {
    // The caller's stream is torch's current one, where torch orders its own work: no handshake.
    if (nb::object capsule = torch_capsule(array); capsule.is_valid()) return capsule;
    if (stream && on_cuda(array))
      return array.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 1),
                                      nb::arg("stream") = *stream);
    try {
      return array.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 1));
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      return array.attr("__dlpack__")();  // a producer that predates max_version
    }
  } catch (nb::python_error& e) {
    // The producer cannot export it (NumPy: a byte order, an object or structured dtype; torch:
    // the meta device, a sparse or nested layout): the library's error, naming the input, with the
    // producer's reason.
    if (!e.matches(PyExc_BufferError) && !e.matches(PyExc_RuntimeError)) throw;
    throw DLPackError(fmt::format("{}: the {} cannot cross through DLPack: {}", what,
                                  nb::inst_name(array).c_str(), nb::str(e.value()).c_str()));
  }
}

template <class Managed>
void free_unconsumed(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: renamed by the consumer
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

nb::object export_capsule(const Tensor& tensor, bool versioned) {
  PyObject* capsule =
      versioned ? PyCapsule_New(to_dlpack_versioned(tensor), kVersioned,
                                [](PyObject* c) {
                                  free_unconsumed<dlpack::DLManagedTensorVersioned>(c, kVersioned);
                                })
                : PyCapsule_New(to_dlpack_legacy(tensor), kLegacy, [](PyObject* c) {
                    free_unconsumed<dlpack::DLManagedTensor>(c, kLegacy);
                  });
  if (capsule == nullptr) throw nb::python_error();
  return nb::steal(capsule);
}

// JAX arrays are immutable, but JAX exports them as legacy capsules, which carry no read-only
// flag: their memory is imported read-only here, so that an op never writes into a JAX array.
bool immutable_by_contract(nb::handle array) {
  const nb::object module = nb::getattr(array.type(), "__module__", nb::none());
  if (module.is_none()) return false;
  const std::string name = nb::cast<std::string>(nb::str(module));
  return name.rfind("jax", 0) == 0;
}

// The tensor in a fresh capsule from a producer, which takes it over.
Tensor take_any_capsule(PyObject* c, const char* what) {
  if (PyCapsule_IsValid(c, kVersioned))
    return take_capsule<dlpack::DLManagedTensorVersioned>(c, kVersioned, "used_dltensor_versioned");
  if (PyCapsule_IsValid(c, kLegacy))
    return take_capsule<dlpack::DLManagedTensor>(c, kLegacy, "used_dltensor");
  throw nb::type_error(
      fmt::format("{}: __dlpack__ returned no unconsumed DLPack capsule", what).c_str());
}

// DLPack's (device type, device id) of a library device.
std::pair<std::int64_t, std::int64_t> dlpack_device_of(const Device& d) {
  if (d.is_cuda()) return {static_cast<std::int64_t>(dlpack::kDLCUDA), d.index};
  return {static_cast<std::int64_t>(dlpack::kDLCPU), 0};
}

// The keywords of a consumer's __dlpack__ call, checked as the DLPack specification gives them: a
// value of the wrong kind is a TypeError naming the keyword, never a crash or a bare cast error.
struct DlpackRequest {
  std::optional<std::intptr_t> stream;  // the consumer's stream; nullopt: None
  bool versioned = false;               // max_version's major is 1 or more
  std::optional<std::pair<std::int64_t, std::int64_t>> device;  // dl_device
};

std::int64_t dlpack_int(nb::handle o, const char* keyword) {
  if (!PyLong_Check(o.ptr()) || PyBool_Check(o.ptr()))
    throw nb::type_error(fmt::format("DLPackTensor.__dlpack__: {} holds a {}, not an int", keyword,
                                     nb::inst_name(o).c_str())
                             .c_str());
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
  if (overflow != 0)
    throw nb::type_error(
        fmt::format("DLPackTensor.__dlpack__: {} holds an int past int64", keyword).c_str());
  return value;
}

std::pair<std::int64_t, std::int64_t> dlpack_pair(nb::handle o, const char* keyword) {
  if (!PyTuple_Check(o.ptr()) || PyTuple_GET_SIZE(o.ptr()) != 2)
    throw nb::type_error(fmt::format("DLPackTensor.__dlpack__: {} is a tuple of two ints; got {}",
                                     keyword, nb::repr(o).c_str())
                             .c_str());
  return {dlpack_int(PyTuple_GET_ITEM(o.ptr(), 0), keyword),
          dlpack_int(PyTuple_GET_ITEM(o.ptr(), 1), keyword)};
}

DlpackRequest read_dlpack_request(nb::handle stream, nb::handle max_version, nb::handle dl_device,
                                  nb::handle copy) {
  DlpackRequest request;
  if (!stream.is_none()) request.stream = dlpack_int(stream, "stream");
  if (!max_version.is_none())
    request.versioned = dlpack_pair(max_version, "max_version").first >= 1;
  if (!dl_device.is_none()) request.device = dlpack_pair(dl_device, "dl_device");
  if (!copy.is_none()) {
    if (!PyBool_Check(copy.ptr()))
      throw nb::type_error(fmt::format("DLPackTensor.__dlpack__: copy is a bool or None; got {}",
                                       nb::repr(copy).c_str())
                               .c_str());
    if (copy.ptr() == Py_True)
      throw nb::buffer_error("DLPackTensor.__dlpack__: copy=True is not supported");
  }
  return request;
}

}  // namespace

bool import_torch(nb::handle array, std::optional<Tensor>& into) {
  if (const TorchExport& e = torch_export(); e.unpack != nullptr) {
    if (e.unpack(array.ptr(), &into.emplace()) != 0) return true;
    into.reset();  // declined: the general path raises the usual error for it
    return false;
  }
  const nb::object capsule = torch_lazy_bit(array) ? nb::object() : torch_capsule(array);
  if (!capsule.is_valid()) {
    into.reset();
    return false;
  }
  into = take_any_capsule(capsule.ptr(), "torch._C._to_dlpack");
  return true;
}

Tensor read_only_view(const Tensor& t) {
  if (t.read_only() || t.is_meta() || t.data_ptr() == nullptr) return t;
  return Tensor::from_blob(t.data_ptr(), t.shape(), t.strides(), t.dtype(), t.device(),
                           std::make_shared<Tensor>(t), /*read_only=*/true);
}

void mark_written(nb::handle array) {
  const TorchExport& e = torch_export();
  if (e.tensor_type == nullptr || !PyObject_TypeCheck(array.ptr(), e.tensor_type)) return;
  if (e.bump_version != nullptr) return e.bump_version(array.ptr());
  if (nb::cast<bool>(array.attr("is_inference")())) return;
  nb::module_::import_("torch.autograd.graph").attr("increment_version")(array);
}

nb::object export_torch(const Tensor& tensor) {
  if (const TorchExport& e = torch_export(); e.wrap != nullptr) {
    PyObject* wrapped = e.wrap(&tensor);
    if (wrapped == nullptr) throw nb::python_error();
    return nb::steal(wrapped);
  }
  // A meta tensor has no memory to exchange: torch's own meta tensor of its geometry.
  if (tensor.is_meta()) {
    const nb::module_ torch = nb::module_::import_("torch");
    const std::string dtype(dtype_name(tensor.dtype()));  // torch's attribute of the same name
    nb::list shape, strides;
    for (std::int64_t s : tensor.shape()) shape.append(s);
    for (std::int64_t s : tensor.strides()) strides.append(s);
    return torch.attr("empty_strided")(nb::tuple(shape), nb::tuple(strides),
                                       nb::arg("dtype") = torch.attr(dtype.c_str()),
                                       nb::arg("device") = "meta");
  }
  // A legacy capsule, as torch._C._from_dlpack takes; torch reads the tensor on the stream that
  // wrote it, so no stream is exchanged.
  return torch_export().from_dlpack(export_capsule(tensor, /*versioned=*/false));
}

std::intptr_t torch_current_stream(int index) {
  const TorchExport& e = torch_export();
  if (e.native_stream != nullptr) {
    // DLPack numbers the legacy default stream (handle 0) 1.
    if (const std::intptr_t handle = e.native_stream(index); handle >= 0)
      return handle == 0 ? 1 : handle;
  }
  if (e.current_stream.is_none()) return 1;
  // torch names the legacy default stream 0, which DLPack forbids for CUDA: its number is 1.
  const auto stream = nb::cast<std::intptr_t>(e.current_stream(index));
  return stream == 0 ? 1 : stream;
}

bool torch_functions_registered() { return torch_export().tensor_type != nullptr; }

Tensor import_array(nb::handle array, const char* what, std::optional<std::intptr_t> stream) {
  const nb::object capsule = capsule_of(array, what, stream);
  try {
    const Tensor tensor = take_any_capsule(capsule.ptr(), what);
    return immutable_by_contract(array) ? read_only_view(tensor) : tensor;
  } catch (const DLPackError& e) {  // what from_dlpack refuses, said of the input that has it
    throw DLPackError(fmt::format("{}: {}", what, e.what()));
  }
}

void bind_arrays(nb::module_& m) {
  m.def(
      "_set_torch_export",
      [](nb::handle tensor_type, nb::object to_dlpack, nb::object from_dlpack,
         nb::object current_stream) {
        if (!PyType_Check(tensor_type.ptr()))
          throw nb::type_error("_set_torch_export: tensor_type is not a type");
        TorchExport& e = torch_export();
        e.to_dlpack = std::move(to_dlpack);
        e.from_dlpack = std::move(from_dlpack);
        e.current_stream = std::move(current_stream);
        Py_INCREF(tensor_type.ptr());  // Kept for the life of the process, as the functions are.
        e.tensor_type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
      },
      nb::arg("tensor_type"), nb::arg("to_dlpack"), nb::arg("from_dlpack"),
      nb::arg("current_stream").none(),
      "torch.Tensor, torch._C._to_dlpack and _from_dlpack, and torch's current raw CUDA stream "
      "reader (None without CUDA): torch tensors cross through them.");
  m.def(
      "_set_torch_bridge",
      [](std::uintptr_t unpack, std::uintptr_t wrap, std::uintptr_t native_stream,
         std::uintptr_t bump_version) {
        TorchExport& e = torch_export();
        e.unpack = reinterpret_cast<int (*)(PyObject*, void*)>(unpack);
        e.wrap = reinterpret_cast<PyObject* (*)(const void*)>(wrap);
        e.native_stream = reinterpret_cast<std::intptr_t (*)(int)>(native_stream);
        e.bump_version = reinterpret_cast<void (*)(PyObject*)>(bump_version);
      },
      nb::arg("unpack"), nb::arg("wrap"), nb::arg("native_stream"), nb::arg("bump_version"),
      "The addresses of libtileops_torch's tileops_torch_unpack, _wrap, _current_stream and "
      "_bump_version (Note [The torch bridge]): torch tensors cross through them instead of "
      "DLPack capsules.");
  nb::class_<DLPackTensor>(m, "DLPackTensor",
                           "A tileops tensor on its way out: pass it to your framework's "
                           "from_dlpack (torch.from_dlpack, numpy.from_dlpack, ...).")
      .def(
          "__dlpack__",
          [](const DLPackTensor& self, nb::handle stream, nb::handle max_version,
             nb::handle dl_device, nb::handle copy) {
            const DlpackRequest request = read_dlpack_request(stream, max_version, dl_device, copy);
            const Device d = self.tensor.device();
            if (request.device && *request.device != dlpack_device_of(d))
              throw nb::buffer_error(
                  fmt::format("DLPackTensor.__dlpack__: dl_device ({}, {}) is not the tensor's "
                              "device {}, and the export copies nothing",
                              request.device->first, request.device->second, d.str())
                      .c_str());
            // A consumer on another stream waits for the op's (Note [Python streams]); DLPack's
            // None means the legacy default stream for CUDA.
            if (d.is_cuda() && self.stream)
              order_after(d.index, *self.stream, request.stream.value_or(1));
            return export_capsule(self.tensor, request.versioned);
          },
          nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
          nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__",
           [](const DLPackTensor& self) {
             const auto [type, index] = dlpack_device_of(self.tensor.device());
             return nb::make_tuple(type, index);
           })
      .def_prop_ro("shape",
                   [](const DLPackTensor& self) {
                     nb::list shape;
                     for (std::int64_t s : self.tensor.shape()) shape.append(s);
                     return nb::tuple(shape);
                   })
      .def_prop_ro("dtype", [](const DLPackTensor& self) {
        return std::string(dtype_name(self.tensor.dtype()));
      });
}

}  // namespace tileops::python
