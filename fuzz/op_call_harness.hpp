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

// Runs the case `data` encodes on `device` (the CPU or a CUDA device; the first call's device is
// the process's). A broken rule prints the call and the rule to stderr and aborts the process.
// `op` receives the op's name.
OpCallOutcome run_op_call(std::span<const std::uint8_t> data, Device device, std::string* op);

}  // namespace tileops::fuzz
