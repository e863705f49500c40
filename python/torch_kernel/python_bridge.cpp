// The torch fast path's bridge (Note [The torch bridge]).
//
// Note [The torch bridge]
// The Python package's extension module (_C) does not link torch: it must import without it. Its
// torch fast path (Note [The torch fast path] in python/src/ops.cpp) otherwise crosses torch
// tensors through DLPack capsules, an allocation, a torch argument parse and a capsule per tensor.
// This library links torch already, so it lends _C four plain C functions, whose addresses the
// package hands over once it has loaded the library (tileops/_torch.py, _C._set_torch_bridge):
// a torch.Tensor's at::Tensor viewed as a library tensor (THPVariable_Unpack), a library tensor
// wrapped as a torch.Tensor (THPVariable_Wrap), torch's current CUDA stream (c10's device
// guard, no Python call), and a tensor's version counter bumped after a call wrote it. They never
// throw: a tensor they cannot take (it needs a gradient, its dtype or device is foreign to the
// library) is declined, and the general path raises the usual error for it. Called with the GIL
// held.
#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

#include "tileops/core/tensor.hpp"
#include "torch_tensors.hpp"

namespace {

using tileops::Tensor;
using namespace tileops::torch_kernel;

}  // namespace

extern "C" {

// Writes the library view of `object` to `*out` (a tileops::Tensor) and returns 1; 0 when
// `object` is no torch tensor, needs a gradient, or has a dtype or device the library lacks.
__attribute__((visibility("default"))) int tileops_torch_unpack(PyObject* object, void* out) {
  if (!THPVariable_Check(object)) return 0;
  try {
    const at::Tensor& tensor = THPVariable_Unpack(object);
    if (tensor.requires_grad()) return 0;
    *static_cast<Tensor*>(out) = view_of(tensor);
    return 1;
  } catch (...) {
    return 0;
  }
}

// A new reference to a torch.Tensor over `*tensor` (a tileops::Tensor), which it holds; null with
// a Python error set when torch cannot wrap it.
__attribute__((visibility("default"))) PyObject* tileops_torch_wrap(const void* tensor) {
  try {
    return THPVariable_Wrap(torch_of(*static_cast<const Tensor*>(tensor)));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

// Bumps the version counter of the torch.Tensor `object` that a call wrote, as torch's in-place
// ops do; nothing for an inference tensor (it has none) or anything else.
__attribute__((visibility("default"))) void tileops_torch_bump_version(PyObject* object) {
  if (!THPVariable_Check(object)) return;
  try {
    const at::Tensor& tensor = THPVariable_Unpack(object);
    if (!tensor.is_inference()) tensor.unsafeGetTensorImpl()->bump_version();
  } catch (...) {
  }
}

// torch's current stream on CUDA device `index`, its native handle as an integer (0: the legacy
// default stream); -1 when torch cannot say.
__attribute__((visibility("default"))) std::intptr_t tileops_torch_current_stream(int index) {
  try {
    return reinterpret_cast<std::intptr_t>(current_cuda_stream(index));
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
