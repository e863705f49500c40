#include "op/call_stack.hpp"

namespace tileops::detail {
namespace {

thread_local std::vector<CallFrame*> stack;

}  // namespace

CallFrame::CallFrame(const Op* op) : op_(op) { stack.push_back(this); }

CallFrame::~CallFrame() { pop(); }

void CallFrame::pop() noexcept {
  if (popped_) return;
  popped_ = true;
  if (!stack.empty() && stack.back() == this) stack.pop_back();
}

const Op* CallFrame::enclosing_op() const noexcept {
  for (std::size_t i = stack.size(); i-- > 0;)
    if (stack[i] == this) return i > 0 ? stack[i - 1]->op_ : nullptr;
  return nullptr;
}

bool CallFrame::enclosed() const noexcept { return stack.size() > 1 && stack.back() == this; }

void CallFrame::complete(const std::shared_ptr<const manifest::SignatureCall>& record) {
  pop();
  if (!stack.empty()) stack.back()->sub_calls_.emplace_back(op_, record);
}

}  // namespace tileops::detail
