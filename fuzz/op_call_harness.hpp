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

// Runs the case `data` encodes on `device` (the CPU or a CUDA device; the first call's device is
// the process's). A broken rule prints the call and the rule to stderr and aborts the process,
// or throws OpCallFinding after keep_going_after_findings(true). `op` receives the op's name.
OpCallOutcome run_op_call(std::span<const std::uint8_t> data, Device device, std::string* op);
void keep_going_after_findings(bool keep_going);

}  // namespace tileops::fuzz
