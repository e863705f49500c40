// The explain scope: the Op::explain_call running on this thread (Note [Explaining a composite]
// in op_explain.cpp).
#pragma once

#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/op/call_spec.hpp"
#include "tileops/op/dispatch.hpp"

namespace tileops::detail {

class ExplainScope {
 public:
  ExplainScope(Device device, DeviceFacts facts);
  ~ExplainScope();  // restores the scope that was current before
  ExplainScope(const ExplainScope&) = delete;
  ExplainScope& operator=(const ExplainScope&) = delete;

  // The innermost scope of this thread, or nullptr when nothing is being explained.
  static ExplainScope* current() noexcept;

  const Device device;      // where the explained call is placed
  const DeviceFacts facts;  // the facts stated for that device
  std::vector<DispatchEvent> events;

 private:
  ExplainScope* previous_;
};

}  // namespace tileops::detail
