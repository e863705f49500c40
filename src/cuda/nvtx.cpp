// NVTX ranges around op calls (TILEOPS_NVTX=1), through the header-only NVTX3 of the CUDA toolkit.
#include <nvtx3/nvToolsExt.h>

#include "cuda/runtime.hpp"

namespace tileops::cuda {

void nvtx_push(const char* name) noexcept { nvtxRangePushA(name); }

void nvtx_pop() noexcept { nvtxRangePop(); }

}  // namespace tileops::cuda
