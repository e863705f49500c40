// The thread-local call stack (docs/seeds.md, construction-and-calls Table 3, steps 1 and 7): each
// running call has a frame that collects the calls its sub-ops complete, so the parent can file
// them under their stages. The frames live on the C++ stack and link to the one below, so pushing
// and popping are two stores (a vector of frames cost a tenth of a cache-hit call's own work).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tileops/manifest/signature_call.hpp"

namespace tileops {
class Op;
}

namespace tileops::detail {

class CallFrame;
// The innermost running call's frame on this thread, or null.
inline thread_local CallFrame* innermost_frame = nullptr;

class CallFrame {
 public:
  explicit CallFrame(const Op* op) : op_(op), below_(innermost_frame) { innermost_frame = this; }
  ~CallFrame() { pop(); }  // pops the frame if complete() did not
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  const std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>>&
  sub_calls() const {
    return sub_calls_;
  }
  // Pops this frame and reports the completed call to the enclosing frame, if any (`record` may
  // be null only when there is none).
  void complete(const std::shared_ptr<const manifest::SignatureCall>& record) {
    pop();
    if (below_) below_->sub_calls_.emplace_back(op_, record);
  }
  // Whether another call on this thread encloses this one (a composite running its stages).
  bool enclosed() const noexcept { return !popped_ && below_ != nullptr; }
  // The op whose call encloses this one on this thread, or null (also once this frame is popped).
  const Op* enclosing_op() const noexcept { return enclosed() ? below_->op_ : nullptr; }

 private:
  void pop() noexcept {
    if (popped_) return;
    popped_ = true;
    if (innermost_frame == this) innermost_frame = below_;
  }

  const Op* op_;
  CallFrame* below_;
  bool popped_ = false;
  std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>> sub_calls_;
};

}  // namespace tileops::detail
