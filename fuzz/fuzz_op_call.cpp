// libFuzzer target for op calls on the CPU: each input is one call of the op-call harness
// (Note [Op-call fuzzing] in op_call_harness.cpp), which aborts on a broken rule.
#include <cstddef>
#include <cstdint>
#include <string>

#include "op_call_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string op;
  (void)tileops::fuzz::run_op_call({data, size}, tileops::Device::cpu(), &op);
  return 0;
}
