// Values the manifest's params mean when left at None, defined once for the op classes, their
// kernels and the float64 references alike.
#pragma once

#include <limits>

namespace tileops {

// eps = None of RMSNormFwdOp, FusedAddRMSNormFwdOp and ResidualRMSNormFwdOp: the epsilon of the
// float32 computation type, 2^-23, for every accepted dtype (torch computes these norms in
// float32 and takes its epsilon; docs/manifest.md §4.1 says why it is not finfo(T).eps).
inline constexpr double kDefaultNormEps = std::numeric_limits<float>::epsilon();

}  // namespace tileops
