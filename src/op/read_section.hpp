// Read sections: when a retired binding group may be freed (Note [Binding reclamation]).
//
// Note [Binding reclamation]: the call path and kernel_for hits read an op's binding group
// through a raw pointer (Op::binding_fast_) and its call-spec tables without a lock (Note
// [Lock-free entry table]), so a group that reset_binding retires cannot be freed while a thread
// may still be inside it. Reading is done inside a read section (epoch-based reclamation):
//   - a process-wide epoch counter only grows; each thread has a slot holding the epoch its
//     outermost open section entered at, or 0 outside any. Entering stores the epoch (one atomic
//     exchange; a nested section, such as kernel_for inside forward or a sub-op's call, only
//     counts its depth), leaving stores 0. run_call and Op::entry_for_call open one.
//   - retiring a group unpublishes it (binding_fast_ is swapped first), then advances the epoch
//     and tags the group with the new value r. A section entered at r or later loads
//     binding_fast_ after the swap, so it can never reach the group; a section entered earlier
//     may. The group is freed once every open section entered at r or later: oldest_section() >= r.
//   - reclaiming is done by the retiring op, under its binding mutex, each time it retires a
//     group; the op's destructor frees the rest (nothing reads a dying op).
// The seq_cst order of the exchange, the loads of binding_fast_, the swap and the scan of the
// slots is what makes "entered at r or later" imply "reads the new group" and "a scan that sees 0
// either saw the section's end (release) or ran before the section began".
//
// So the retired groups an op keeps are those retired since the oldest call still running (on
// any thread, of any op) began: one thread that fails calls in a loop keeps at most two, and the
// count falls back as soon as the calls that may read them end. The cost on the hot path is one
// atomic exchange per outermost section and a thread-local depth count per nested one.
#pragma once

#include <atomic>
#include <cstdint>

namespace tileops::detail {

// One thread's read state. Only its thread writes it; reclaimers read `entered`.
struct ReaderSlot {
  std::atomic<std::uint64_t> entered{0};  // the epoch of the outermost open section; 0: none
  int depth = 0;                          // open sections, nested
};

// The process-wide epoch; starts at 1, so that a slot's 0 means "outside".
inline std::atomic<std::uint64_t> read_epoch{1};

// This thread's slot, registered on first use and unregistered when the thread ends.
ReaderSlot& register_this_thread();
inline thread_local ReaderSlot* this_thread_slot = nullptr;

class ReadSection {
 public:
  ReadSection() : slot_(this_thread_slot ? *this_thread_slot : register_this_thread()) {
    if (slot_.depth++ == 0)
      slot_.entered.exchange(read_epoch.load(std::memory_order_acquire), std::memory_order_seq_cst);
  }
  ~ReadSection() {
    if (--slot_.depth == 0) slot_.entered.store(0, std::memory_order_release);
  }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

 private:
  ReaderSlot& slot_;
};

// Advances the epoch and returns the new value: the tag of a group unpublished just before.
inline std::uint64_t advance_epoch() noexcept {
  return read_epoch.fetch_add(1, std::memory_order_seq_cst) + 1;
}

// The epoch the oldest open section (of any thread) entered at; UINT64_MAX when none is open.
std::uint64_t oldest_section();

}  // namespace tileops::detail
