// The generic op suite's call check and tensor helpers (test_generic_ops.cpp).
//
// Note [Generic call check]
// check_call() runs one call and checks everything the manifest and the float64 reference say of
// it, for any op:
//   - the result has one entry per declared output; every output the effect branch emits is a CPU
//     tensor of the shape and dtype the signature infers for the call; the buffer output of a call
//     given out= is that out buffer (same storage and address), which was poisoned (all bits set,
//     NaN in every float dtype) before the call, so an element the op forgets to write fails;
//   - every output and every input the call writes holds the values of references::find_reference
//     (the reference gives them by name), within references::tolerance of its dtype; the reference
//     gives values for each of them and for nothing else;
//   - every byte of the inputs' storages that the call does not write is unchanged: unwritten
//     inputs entirely, and a written input's storage between the elements of its view.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "op_info.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"

namespace tileops::generic {

using Inputs = std::vector<std::optional<Tensor>>;

// A seed derived from a test's name (FNV-1a): each test draws its own inputs, reproducibly.
std::uint64_t seed_of(std::string_view text);

// Fresh random inputs of the case (workloads::random_inputs: never zero).
Inputs inputs_of(const Case& c, std::uint64_t seed);
// One random tensor of `spec` on the CPU.
Tensor random_tensor(const TensorSpec& spec, std::uint64_t seed);
// A contiguous tensor with every bit set.
Tensor poisoned(const TensorSpec& spec);
// Row-major strides of `shape`, doubled: a view of every other element of 2 * numel.
Shape every_other_strides(const Shape& shape);
// A copy of `t` viewed with every stride doubled (every other element of a poisoned storage).
Tensor strided_copy(const Tensor& t);
// The shapes and dtypes of `inputs` as meta tensors.
Inputs metas_of(const Inputs& inputs);

// Runs `op` on `inputs` (with a poisoned out= when `with_out` and the op takes one) and checks the
// call (Note [Generic call check]); the result goes to `result` when given.
void check_call(Op& op, const OpInfo& info, const Inputs& inputs, bool with_out,
                CallResult* result = nullptr);

// Registers Generic/<Op>.<Check> for every `status: implemented` entry (test_generic_ops.cpp);
// the ops tests' main() calls it before running the tests.
void register_generic_suite();

// Runs `f`, expecting an exception of type E; its message goes to `message`.
template <class E>
::testing::AssertionResult raises(const std::function<void()>& f, std::string* message) {
  try {
    f();
  } catch (const E& e) {
    *message = e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

}  // namespace tileops::generic
