// The call-spec -> entry cache of one interface (_entries_by_call): the table a kernel_for hit
// reads.
//
// Note [Lock-free entry table]: a hit is the hot path of every op call, so it takes no lock. The
// table is open addressing (linear probing) over an array of atomic node pointers. It only grows:
// a node, once published, is never changed or freed, and neither is an array, until the table
// dies; there is no erase and no clear. A table dies with its binding group, once no read section
// can be inside it (Note [Binding reclamation] in read_section.hpp). A writer (one at a time: the
// caller holds the binding's build mutex) fills a node, then publishes it with a release store into
// an empty slot; when a node would fill more than half the slots, it places every node into an
// array twice as large instead and publishes that through `slots_`. A reader loads the array, then
// the slots, with acquire, so it sees every node it reaches whole; a reader still probing an older
// array finds what that array held and, at worst, misses a newer spec and takes the miss path,
// which looks again under the build mutex. The load factor of at most 1/2 keeps probes short and
// ends every probe at an empty slot. Keeping the old arrays costs less than the live one (sizes
// double), and an empty table allocates nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <vector>

#include "tileops/op/kernel.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops::detail {

class EntryTable {
 public:
  explicit EntryTable(const CallSpecOps* ops) : ops_(ops) {}
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  const CallSpecOps& ops() const noexcept { return *ops_; }

  // The entry cached for `spec`, whose hash is `hash`; null when there is none. Lock-free, and
  // safe while another thread inserts; what it points to lives as long as the table.
  const std::shared_ptr<KernelInterface>* find(std::size_t hash, const void* spec) const {
    const Slots* s = slots_.load(std::memory_order_acquire);
    if (!s) return nullptr;
    for (std::size_t i = s->home(hash);; i = (i + 1) & s->mask) {
      const Node* n = s->slot[i].load(std::memory_order_acquire);
      if (!n) return nullptr;
      if (n->hash == hash && ops_->equals(n->spec.get(), spec)) return &n->entry;
    }
  }

  // Caches `entry` for `spec` (a copy the table keeps), which must not be cached yet, and returns
  // the table's slot for it. The caller holds the build mutex of the binding that owns the table.
  const std::shared_ptr<KernelInterface>& insert(std::size_t hash, std::shared_ptr<const void> spec,
                                                 std::shared_ptr<KernelInterface> entry);

  std::size_t size() const noexcept { return nodes_.size(); }

 private:
  struct Node {
    std::size_t hash;
    std::shared_ptr<const void> spec;
    std::shared_ptr<KernelInterface> entry;
  };
  struct Slots {
    explicit Slots(int bits)
        : mask((std::size_t{1} << bits) - 1),
          shift(std::numeric_limits<std::size_t>::digits - bits),
          slot(std::size_t{1} << bits) {}
    // Fibonacci hashing: the top bits of hash * 2^64/phi, so that call spec hashes whose low bits
    // vary little still spread.
    std::size_t home(std::size_t hash) const noexcept {
      return static_cast<std::size_t>(hash * 0x9e3779b97f4a7c15ull) >> shift;
    }
    std::size_t mask;
    int shift;
    std::vector<std::atomic<const Node*>> slot;  // value-initialised: every slot empty
  };

  // Publishes `n` in `s`; the writer's side, so the probe reads relaxed.
  static void place(Slots& s, const Node* n) noexcept;

  const CallSpecOps* ops_;
  std::atomic<const Slots*> slots_{nullptr};
  // The writer's side, under the build mutex: every array ever published (the live one last) and
  // every node. A deque never moves what it holds.
  std::vector<std::unique_ptr<Slots>> arrays_;
  std::deque<Node> nodes_;
};

}  // namespace tileops::detail
