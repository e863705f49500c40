// CUDA streams and memory for calls from Python (Note [Python streams] in streams.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

#include "tileops/core/stream.hpp"

namespace tileops::python {

// The library stream of a DLPack stream number on CUDA device `index`: 0 (torch's name for the
// legacy default stream) and 1 are the legacy default stream, 2 the per-thread default stream,
// anything else a cudaStream_t.
Stream stream_of(int index, std::intptr_t dlpack_stream);

// Makes work queued later on `consumer` (a DLPack stream number; -1: the consumer asks for no
// ordering) wait for the work queued so far on `producer`, a stream of CUDA device `index`.
// Nothing when they are the same stream or in a build without CUDA.
void order_after(int index, std::intptr_t producer, std::intptr_t consumer);

void bind_streams(nanobind::module_& m);

}  // namespace tileops::python
