// The rope family's messages that every implementation gives alike (the CPU kernel checks
// positions before writing; a CUDA kernel reports them in the checking mode).
#pragma once

#include <cstdint>
#include <string>

namespace tileops::kernels {

// positions[token] = position names no row of a cache of `cache_rows` rows. The message starts
// with the op's name, as every message of the library's ops does: the rope kernels serve
// RopeFwdOp alone.
inline std::string bad_position_message(std::int64_t token, std::int64_t position,
                                        std::int64_t cache_rows) {
  return "RopeFwdOp: positions[" + std::to_string(token) + "] = " + std::to_string(position) +
         " is outside the rows of cos_sin_cache, [0, " + std::to_string(cache_rows) + ")";
}

}  // namespace tileops::kernels
