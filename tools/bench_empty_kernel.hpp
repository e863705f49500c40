// An empty kernel for `tileops bench`'s launch reference (CUDA builds only).
#pragma once

namespace tileops::cli {

// Launches `count` empty kernels of one block on `stream` (a cudaStream_t); false when a launch
// failed.
bool launch_empty_kernels(void* stream, int count);

}  // namespace tileops::cli
