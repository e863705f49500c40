// The writer's side of the lock-free entry table (Note [Lock-free entry table] in entry_table.hpp).
#include "op/entry_table.hpp"

#include <bit>

namespace tileops::detail {

void EntryTable::place(Slots& s, const Node* n) noexcept {
  std::size_t i = s.home(n->hash);
  while (s.slot[i].load(std::memory_order_relaxed)) i = (i + 1) & s.mask;
  s.slot[i].store(n, std::memory_order_release);
}

const std::shared_ptr<KernelInterface>& EntryTable::insert(std::size_t hash,
                                                           std::shared_ptr<const void> spec,
                                                           std::shared_ptr<KernelInterface> entry) {
  // Everything that can throw comes first, so that a failed insert leaves the table as it was.
  Slots* live = arrays_.empty() ? nullptr : arrays_.back().get();
  std::unique_ptr<Slots> grown;
  if (!live || 2 * (nodes_.size() + 1) > live->slot.size()) {
    grown = std::make_unique<Slots>(live ? std::countr_zero(live->slot.size()) + 1 : 3);
    arrays_.reserve(arrays_.size() + 1);
  }
  const Node& node = nodes_.emplace_back(Node{hash, std::move(spec), std::move(entry)});
  if (!grown) {
    place(*live, &node);
    return node.entry;
  }
  // Grown: a fresh array holding every node, published whole; the old one stays for the readers
  // still probing it.
  for (const Node& n : nodes_) place(*grown, &n);
  slots_.store(grown.get(), std::memory_order_release);
  arrays_.push_back(std::move(grown));
  return node.entry;
}

}  // namespace tileops::detail
