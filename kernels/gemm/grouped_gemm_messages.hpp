// The message every GroupedGemmFwdOp implementation gives for offsets that break the manifest's
// contract (non-decreasing, in [0, M]): the CPU kernel checks before writing; a CUDA kernel
// reports the first bad offset in the checking mode (Note [Kernel checking mode] in
// src/cuda/kernel_checks.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace tileops::kernels {

// offsets[group] = offset is negative, past the `rows` rows of x, or below offsets[group - 1] (the
// one case left when it is neither of the others).
inline std::string bad_offset_message(std::int64_t group, std::int64_t offset, std::int64_t rows) {
  const std::string head =
      "GroupedGemmFwdOp: offsets[" + std::to_string(group) + "] = " + std::to_string(offset);
  if (offset < 0) return head + " is negative";
  if (offset > rows) return head + " is past the " + std::to_string(rows) + " rows of x";
  return head + " is below offsets[" + std::to_string(group - 1) +
         "]; offsets must be non-decreasing";
}

}  // namespace tileops::kernels
