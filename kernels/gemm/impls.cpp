// The gemm family's implementation table (docs/framework.md): one row per implementation.
// Precedence is declared by each implementation (general, preferred_over), never by the order here.
// The CUDA rows exist in CUDA builds only.
#include "tileops/op/implementation_table.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops::kernels {

void gemm_implementations(ImplementationTable& table) {
  (void)table;
}

}  // namespace tileops::kernels
