// Launches with programmatic dependent launch (dependent_launch.hpp; Note [Dependent launch]).
#include "cuda/dependent_launch.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cuda/check.hpp"

namespace tileops::cuda {
namespace {

bool read_pdl_env() noexcept {
  const char* v = std::getenv("TILEOPS_PDL");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

std::atomic<bool>& pdl_flag() {
  static std::atomic<bool> flag{read_pdl_env()};
  return flag;
}

}  // namespace

bool dependent_launch_enabled() noexcept { return pdl_flag().load(std::memory_order_relaxed); }

void reload_dependent_launch_setting() noexcept {
  pdl_flag().store(read_pdl_env(), std::memory_order_relaxed);
}

void launch_dependent(const void* kernel, dim3 grid, dim3 block, void** args,
                      std::size_t shared_bytes, cudaStream_t stream, unsigned cluster_blocks) {
  cudaLaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (dependent_launch_enabled()) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster_blocks > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count++].val.clusterDim = {cluster_blocks, 1, 1};
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  TILEOPS_CUDA_CHECK(cudaLaunchKernelExC(&config, kernel, args));
  TILEOPS_CUDA_CHECK_LAUNCH();
}

}  // namespace tileops::cuda
