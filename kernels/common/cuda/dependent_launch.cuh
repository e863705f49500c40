// The kernels' side of programmatic dependent launch (Note [Dependent launch] in
// src/cuda/dependent_launch.hpp). Framework-free, like vec.cuh; sm_90 and later.
#pragma once

namespace tileops::kernels::cuda {

// Every thread of a kernel launched by launch_dependent calls this before its first read or
// write of global memory: it waits until the previous kernel of the stream has completed and its
// writes are visible (nothing when the launch did not overlap), then lets the next kernel of the
// stream be placed on the device, whose blocks wait the same way before touching memory.
__device__ __forceinline__ void begin_dependent_kernel() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace tileops::kernels::cuda
