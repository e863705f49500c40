// Kernel launches that let the next kernel of the stream start before this one ends
// (programmatic dependent launch, sm_90 and later). Private to the library, like check.hpp: the
// launch files of kernels/*/cuda use it; the kernels' side is
// kernels/common/cuda/dependent_launch.cuh.
//
// Note [Dependent launch]
// A kernel on a stream normally starts only after the one before it has finished and its writes
// are flushed: launching it, placing its blocks and their set-up follow the previous kernel's
// last block. For a decode-sized call (one row, a few microseconds) that gap is a large part of
// the time, and for a multi-wave call it is the last wave's tail. Launched with
// cudaLaunchAttributeProgrammaticStreamSerialization, a kernel may be placed on the device while
// the previous kernel of the stream still runs, as soon as that kernel's blocks have all called
// griddepcontrol.launch_dependents (or exited); each of its blocks then waits in
// griddepcontrol.wait until the previous kernel has completed and its memory is visible.
//
// The rule that keeps this correct: every kernel launched here calls begin_dependent_kernel()
// (dependent_launch.cuh) before its first read or write of global memory, so it neither reads
// an input the previous kernel is still writing nor overwrites one it is still reading. The wait
// is a no-op for a kernel launched without the attribute, and a previous kernel that never calls
// launch_dependents (torch's, cuBLAS's) triggers when its blocks exit, so mixing with other
// libraries' kernels is safe. Stream capture records the overlap as a programmatic edge, so CUDA
// graphs keep it.
//
// TILEOPS_PDL=0 launches every kernel the ordinary way (for comparisons and debugging); read at
// the first launch, reloadable for tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tileops::cuda {

// TILEOPS_PDL is unset, "" or anything but "0".
bool dependent_launch_enabled() noexcept;
// Reads TILEOPS_PDL again (a test that sets it for a while, then restores it).
void reload_dependent_launch_setting() noexcept;

// cudaLaunchKernel with the programmatic stream serialization attribute when enabled, and in
// clusters of `cluster_blocks` blocks along x when above 1 (grid.x a multiple of it); raises
// CudaError (with the launch check) on failure. `kernel` must call begin_dependent_kernel()
// before touching global memory.
void launch_dependent(const void* kernel, dim3 grid, dim3 block, void** args,
                      std::size_t shared_bytes, cudaStream_t stream, unsigned cluster_blocks = 1);

// The same for a kernel taking one parameter block by value (the kernels of the norm, softmax,
// elementwise, activation, RoPE and ALiBi families).
template <class Params>
void launch_dependent(void (*kernel)(Params), dim3 grid, dim3 block, std::size_t shared_bytes,
                      cudaStream_t stream, Params params) {
  void* args[] = {&params};
  launch_dependent(reinterpret_cast<const void*>(kernel), grid, block, args, shared_bytes, stream);
}

}  // namespace tileops::cuda
