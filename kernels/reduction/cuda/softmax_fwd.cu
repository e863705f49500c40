// softmax's instantiations of the softmax kernels (softmax_launch.cuh).
#include "kernels/reduction/cuda/softmax_launch.cuh"

namespace tileops::kernels::cuda {

void launch_softmax_fwd(const SoftmaxLaunch& launch, DType dtype, const SoftmaxShape& shape,
                        const void* x, void* out, void* scratch, void* stream) {
  reduction::launch_softmax_op<false>(launch, dtype, shape, x, out, scratch, stream);
}

void allow_softmax_staged(DType dtype) { reduction::allow_softmax_staged_op<false>(dtype); }

}  // namespace tileops::kernels::cuda
