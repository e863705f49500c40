// The thread-local call stack (docs/seeds.md, construction-and-calls Table 3, steps 1 and 7): each
// running call has a frame that collects the calls its sub-ops complete, so the parent can file
// them under their stages.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tileops/manifest/signature_call.hpp"

namespace tileops {
class Op;
}

namespace tileops::detail {

class CallFrame {
 public:
  explicit CallFrame(const Op* op);
  ~CallFrame();  // pops the frame if record() did not
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  const std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>>&
  sub_calls() const {
    return sub_calls_;
  }
  // Pops this frame and reports the completed call to the enclosing frame, if any (`record` may
  // be null only when there is none).
  void complete(const std::shared_ptr<const manifest::SignatureCall>& record);
  // Whether another call on this thread encloses this one (a composite running its stages).
  bool enclosed() const noexcept;
  // The op whose call encloses this one on this thread (a composite running its stages), or null.
  const Op* enclosing_op() const noexcept;

 private:
  void pop() noexcept;
  const Op* op_;
  bool popped_ = false;
  std::vector<std::pair<const Op*, std::shared_ptr<const manifest::SignatureCall>>> sub_calls_;
};

}  // namespace tileops::detail
