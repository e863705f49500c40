#include "op/read_section.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <vector>

namespace tileops::detail {
namespace {

// Every thread that has opened a read section and not ended yet. Never destroyed: threads may
// end after static destructors have run.
struct Readers {
  std::mutex mutex;
  std::vector<ReaderSlot*> slots;
};

Readers& readers() {
  static Readers* r = new Readers;
  return *r;
}

// Owns the calling thread's slot: registers it, and unregisters it when the thread ends.
struct ThreadReader {
  ThreadReader() {
    Readers& r = readers();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.slots.push_back(&slot);
  }
  ~ThreadReader() {
    Readers& r = readers();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.slots.erase(std::find(r.slots.begin(), r.slots.end(), &slot));
    this_thread_slot = nullptr;
  }
  ReaderSlot slot;
};

}  // namespace

ReaderSlot& register_this_thread() {
  thread_local ThreadReader reader;
  this_thread_slot = &reader.slot;
  return reader.slot;
}

std::uint64_t oldest_section() {
  Readers& r = readers();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  for (const ReaderSlot* s : r.slots) {
    const std::uint64_t entered = s->entered.load(std::memory_order_seq_cst);
    if (entered != 0) oldest = std::min(oldest, entered);
  }
  return oldest;
}

}  // namespace tileops::detail
