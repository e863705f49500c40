// The op-call harness (Note [Op-call fuzzing] in op_call_harness.cpp): one fuzz input run as one
// op call, on the CPU or a CUDA device. fuzz_op_call (libFuzzer, the CPU) and
// tileops_op_call_replay (a corpus replayed on either device, any compiler) share it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tileops/core/device.hpp"

namespace tileops::fuzz {

// What became of one input's call.
enum class OpCallOutcome {
  kSkipped,  // no call: a tensor no library makes, or outputs past the harness's budget
  kRefused,  // the op refused it (a tileops::Error naming the op)
  kRan,      // the call ran and kept every rule
};

// A broken rule, as keep_going_after_findings has run_op_call throw it. Not a std::exception, so
// that nothing between the rule and the caller takes it for the library's error.
struct OpCallFinding {
  std::string what;    // the rule, the call and the last error the op raised
  bool fatal = false;  // nothing can run after it (a CUDA error: the device's context is lost)
};

// The sizes of a run: the seed cases' and the budget of a mutated call. A tensor past
// max_tensor_elems elements (or its storage past max_tensor_bytes) is made a meta tensor, which
// still takes every check; a call whose outputs exceed max_output_bytes is checked but not run.
struct OpCallSizes {
  std::int64_t seed_elems = 1024;  // elements of a seed case's largest tensor
  std::int64_t max_tensor_elems = std::int64_t{1} << 14;
  std::int64_t max_tensor_bytes = std::int64_t{1} << 18;
  std::int64_t max_output_bytes = std::int64_t{1} << 22;
};
// 64 times the default: seeds past the kernels' one-block shapes (tileops_op_call_replay --large).
inline constexpr OpCallSizes kLargeOpCallSizes{std::int64_t{1} << 16, std::int64_t{1} << 20,
                                               std::int64_t{1} << 24, std::int64_t{1} << 28};

// Runs the case `data` encodes on `device` (the CPU or a CUDA device) at `sizes` (the first call's
// device and sizes are the process's). A broken rule prints the call and the rule to stderr and
// aborts the process, or throws OpCallFinding after keep_going_after_findings(true). `op`
// receives the op's name.
OpCallOutcome run_op_call(std::span<const std::uint8_t> data, Device device, std::string* op,
                          const OpCallSizes& sizes = {});
void keep_going_after_findings(bool keep_going);

}  // namespace tileops::fuzz
