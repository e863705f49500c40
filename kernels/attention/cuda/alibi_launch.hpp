// The ALiBi kernel as the adapters see it (no CUDA header).
#pragma once

#include <cstdint>

#include "tileops/core/dtype.hpp"

namespace tileops::kernels::cuda {

// The grid of the ALiBi kernel of `vector` and `dtype` on the current device, which has
// `sm_count` multiprocessors: the blocks resident on the whole device at once. Planned once per
// entry (an occupancy query).
int plan_alibi(bool vector, DType dtype, int sm_count);

// Writes the ALiBi bias of `heads` heads and `seq_len` positions into `out` (device memory,
// contiguous [heads, seq_len, seq_len] of `dtype`) on `stream` (a cudaStream_t) of the current
// device in at most `max_blocks` blocks (plan_alibi), asynchronously, the launch checked.
// `vector`: out is 16-byte aligned (Note [ALiBi kernel] in alibi.cuh). Launches nothing for an
// empty out.
void launch_alibi(bool vector, DType dtype, std::int64_t heads, std::int64_t seq_len, void* out,
                  int max_blocks, void* stream);

}  // namespace tileops::kernels::cuda
