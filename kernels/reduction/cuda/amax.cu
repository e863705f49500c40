// amax's instantiations of the reduction kernels (reduce_launch.cuh).
#include "kernels/reduction/cuda/reduce_launch.cuh"

namespace tileops::kernels::cuda {

void launch_amax_fwd(const ReduceLaunch& launch, DType dtype, const void* x, void* out,
                     void* scratch, void* stream) {
  reduction::launch_reduce_op<reduction::AmaxPolicy>("amax", launch, dtype, x, out, scratch,
                                                     stream);
}

}  // namespace tileops::kernels::cuda
