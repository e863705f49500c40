// Tensors in and out of Python through the DLPack capsule protocol (Note [Python arrays] in
// arrays.cpp): any object with __dlpack__ (torch, NumPy, CuPy, JAX) imports without a copy, and a
// result exports as a DLPackTensor that the caller's framework turns into its own array.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "tileops/core/tensor.hpp"

namespace tileops::python {

// The tensor behind `array` (an object with __dlpack__, or a DLPack capsule), sharing its memory.
// TypeError for anything else; DLPackError for a tensor the library cannot represent. With a
// `stream` (a DLPack stream number, Note [Python streams] in streams.cpp), a CUDA array's producer
// is asked to make its data ready for work on that stream.
Tensor import_array(nanobind::handle array, const char* what,
                    std::optional<std::intptr_t> stream = std::nullopt);

// A library tensor on its way out: an object with __dlpack__ and __dlpack_device__. `stream`: the
// DLPack number of the stream whose work writes it (CUDA outputs of a call given one).
struct DLPackTensor {
  explicit DLPackTensor(Tensor t, std::optional<std::intptr_t> s = std::nullopt)
      : tensor(std::move(t)), stream(s) {}

  Tensor tensor;
  std::optional<std::intptr_t> stream;
};

// The torch fast path (Note [The torch fast path] in ops.cpp), through the torch functions
// tileops._torch registers (_set_torch_export). Writes the tensor behind `array`, sharing its
// memory, into `into` (in place: a Tensor is a few hundred bytes, and this runs per tensor per
// call) and returns true; false, with `into` empty, when `array` is no torch tensor, needs a
// gradient, or no functions are registered.
bool import_torch(nanobind::handle array, std::optional<Tensor>& into);
// `t` viewed read-only (its DLPack export carries the read-only flag, which NumPy honours).
Tensor read_only_view(const Tensor& t);
// A torch tensor sharing `tensor`'s memory, written on torch's current stream (no ordering).
nanobind::object export_torch(const Tensor& tensor);
// Marks `array`, when it is a torch tensor a call wrote (a written input, out=), as changed: its
// version counter goes up, as torch's own in-place ops do, so that autograd refuses a backward
// that would read the value it saved before the call overwrote it. Nothing for other arrays and
// for inference tensors, which have no counter.
void mark_written(nanobind::handle array);
// The DLPack number of torch's current stream on CUDA device `index`.
std::intptr_t torch_current_stream(int index);
// Whether the torch functions are registered (torch is in the process).
bool torch_functions_registered();

void bind_arrays(nanobind::module_& m);

}  // namespace tileops::python
