// The device side of the kernels' checking mode (Note [Kernel checking mode] in
// src/cuda/kernel_checks.hpp): a kernel reports the bad value it skipped.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/kernel_checks.hpp"  // KernelCheckRecord: plain types, no framework

namespace tileops::kernels::cuda {

using tileops::cuda::KernelCheckRecord;

// Records (index, value) in `record` unless a report of a lower index is there already; nothing
// when `record` is null (the mode is off). Reports are rare (bad inputs only), so a spin lock
// around the two fields is cheap enough, and it keeps index and value of one report together,
// which two separate atomics would not. Independent thread scheduling (sm_70 and later) lets
// lanes of one warp wait on each other here.
__device__ __forceinline__ void report_kernel_check(KernelCheckRecord* record, std::int64_t index,
                                                    std::int64_t value) {
  if (record == nullptr) return;
  while (atomicCAS(&record->lock, 0u, 1u) != 0u) __nanosleep(64);
  __threadfence();
  volatile KernelCheckRecord* r = record;
  if (r->reported == 0u || index < r->index) {
    r->index = index;
    r->value = value;
    r->reported = 1u;
  }
  __threadfence();
  atomicExch(&record->lock, 0u);
}

}  // namespace tileops::kernels::cuda
