// Note [Record reuse] (the op side; the plan side is in signature_call.hpp): a call's record,
// once shared (Note [Lazy publication] in op_call.cpp), is last_call and may be handed to a parent
// call's stages and to any caller of last_call(); a record never shared goes back to the pool
// directly. The shared_ptr that publishes it has a deleter that returns the record to its
// op's pool when the last holder lets go, so the next call refills it (no allocation of its
// vectors, no copy of the params) instead of building a new one. Returning through the deleter
// orders every holder's reads before the refill (the count's release-acquire decrement, then the
// spare slot's release-acquire exchange), which watching use_count() would not. The spare slot is
// one atomic pointer, so taking and giving back cost one atomic operation each and no lock. The
// pool is shared with the deleters, so a record released after its op died is simply deleted by the
// pool's last owner.
#pragma once

#include <atomic>
#include <memory>

#include "tileops/manifest/signature_call.hpp"

namespace tileops::detail {

class RecordPool : public std::enable_shared_from_this<RecordPool> {
 public:
  // A record to fill: the spare one, or a new one.
  std::unique_ptr<manifest::SignatureCall> take();
  // Shares `record`; it comes back to this pool when its last holder lets go.
  std::shared_ptr<manifest::SignatureCall> publish(std::unique_ptr<manifest::SignatureCall> record);
  // Keeps `record` as the spare when there is none, else deletes it.
  void give_back(std::unique_ptr<manifest::SignatureCall> record) noexcept;

  RecordPool() = default;
  RecordPool(const RecordPool&) = delete;
  RecordPool& operator=(const RecordPool&) = delete;
  ~RecordPool() { delete spare_.load(std::memory_order_acquire); }

 private:
  std::atomic<manifest::SignatureCall*> spare_{nullptr};
};

}  // namespace tileops::detail
