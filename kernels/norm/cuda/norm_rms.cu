// The rms_norm kernels: every path, dtype and lanes per row (norm_instances.cuh).
#include "kernels/norm/cuda/norm_instances.cuh"

namespace tileops::kernels::cuda {

const void* rms_norm_kernel(NormPath path, DType dtype, int lanes, int few_rows_cluster) {
  return norm_kernel<NormKind::kRMS>(path, dtype, lanes, few_rows_cluster);
}

NormFixedKernel rms_norm_fixed_kernel(DType dtype, std::int64_t n) {
  return norm_fixed_kernel<NormKind::kRMS>(dtype, n);
}

}  // namespace tileops::kernels::cuda
