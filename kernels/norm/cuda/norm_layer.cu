// The layer_norm kernels: every path, dtype and lanes per row (norm_instances.cuh).
#include "kernels/norm/cuda/norm_instances.cuh"

namespace tileops::kernels::cuda {

const void* layer_norm_kernel(NormPath path, DType dtype, int lanes, FewRows few_rows) {
  return norm_kernel<NormKind::kLayer>(path, dtype, lanes, few_rows);
}

}  // namespace tileops::kernels::cuda
