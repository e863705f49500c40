// The op-call harness's rules (Note [Op-call fuzzing] in op_call_harness.cpp): what every call,
// failed or not, must keep, and what the harness prints when one is broken.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "op_call_harness.hpp"
#include "tileops/core/device.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/op/op.hpp"

namespace tileops::fuzz {

using Inputs = std::vector<std::optional<Tensor>>;

// The call under test as a finding names it: the op alone until its inputs are made, then
// describe_call's text; the last error it raised is forgotten when a call starts. `device` is the
// run's.
void start_call(const std::string& op, Device device);
void describe_call(const std::string& op, const ParamMap& params, const Inputs& inputs,
                   const std::optional<Tensor>& out);

// A broken rule: printed, then the process aborts, or (keep_going_after_findings) an OpCallFinding
// is thrown to run_op_call's caller. `fatal`: nothing can run after it (a CUDA context lost).
[[noreturn]] void finding(const std::string& what, bool fatal = false);

// A tileops::Error the op raised: remembered as the call's last error; a finding unless it names
// `op`.
void record_error(const std::string& op, const tileops::Error& e);

// Whether the run's device still takes work after a CudaError: a kernel that faulted leaves the
// context broken, and nothing runs after it; a call the runtime or a CUDA library refused (no
// algorithm, no memory) leaves it working, and the replay goes on to the next input.
bool device_still_works();

// Runs `f`; a tileops::Error (or an allocation the machine refuses) is an answer, anything else a
// finding. Returns whether `f` completed.
template <class F>
bool completes(const std::string& op, F&& f) {
  try {
    f();
    return true;
  } catch (const tileops::CudaError& e) {
    finding(
        op + ": a CUDA error (a kernel that faulted, or a call the runtime refused): " + e.what(),
        /*fatal=*/!device_still_works());
  } catch (const tileops::Error& e) {
    record_error(op, e);
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::exception& e) {
    finding(op + ": an exception that is not a tileops::Error: " + e.what());
  }
}

// The outputs of a call that ran have the shapes and dtypes check_call inferred (`expected`), on
// the call's device, and the buffer output is `out` where one was passed.
void check_result(const Op& op, const tileops::CallResult& result,
                  const tileops::manifest::SignatureCall& expected, const Tensor* out);

// The bytes of every input's storage (empty for a meta tensor or none), for check_unwritten.
std::vector<std::vector<std::byte>> snapshot(const Inputs& inputs);

// Inputs a call leaves as they were: after one that ran, each input the call's record does not
// write, that shares no memory with an input it writes or an output; after one that failed, every
// input on the CPU (which checks before it writes), and on a device each input the signature never
// writes (the checking mode raises after the kernel, which rotated RoPE's other tokens:
// docs/cuda.md); a read-only input in every case. `device` is the run's, `before` the inputs'
// snapshot.
void check_unwritten(const Op& op, Device device, const Inputs& inputs, bool ran,
                     const tileops::CallResult& result,
                     const std::vector<std::vector<std::byte>>& before);

// A call that writes no input, made again on the same inputs (the instance's cache hit, where the
// first was a miss), succeeds and gives the same bits: the kernels are deterministic.
void check_repeatable(Op& op, const Inputs& inputs, const tileops::CallOptions& options,
                      const tileops::CallResult& first);

}  // namespace tileops::fuzz
