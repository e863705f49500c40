// The binding group of an instance (docs/seeds.md, class-structure Table 3): the selected target
// and every cache built under it.
//
// Note [Binding group]: the group is one object, replaced whole by reset_binding. Retiring it
// empties its built entries and target kernels under their locks at once, but not its call-spec
// tables (InterfaceCache::by_call): kernel_for hits read those without a lock (Note [Lock-free
// entry table] in entry_table.hpp), and calls read the group through a raw pointer, so the group
// itself, with the entries its tables hold, is kept until no read section that may be inside it
// is still open, then freed (Note [Binding reclamation] in read_section.hpp). Entries are
// reference counted, so one running in another thread outlives the reset. The framework retires
// a group when the call that selected its target fails (construction-and-calls Table 6), and when
// the op's owner calls reset_binding; a fresh group starts with empty tables that allocate nothing
// until their first entry.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "op/entry_table.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/op/identity.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops::detail {

struct BuiltKey {
  int type = -1;  // index into the installed table
  Identity identity;
  friend bool operator==(const BuiltKey&, const BuiltKey&) = default;
};
struct BuiltKeyHash {
  std::size_t operator()(const BuiltKey& k) const noexcept {
    return k.identity.hash() * 31 + static_cast<std::size_t>(k.type);
  }
};

// _entries_by_call and _built_entries of one interface. `by_call` is read without a lock and
// written under the binding's build mutex; `mutex` guards `built` and `built_order`.
struct InterfaceCache {
  explicit InterfaceCache(const CallSpecOps* ops) : by_call(ops) {}
  EntryTable by_call;
  mutable std::shared_mutex mutex;
  std::unordered_map<BuiltKey, std::shared_ptr<KernelInterface>, BuiltKeyHash> built;
  std::vector<BuiltKey> built_order;
};

// The target kernel cache key: the device and each input's dtype and shape (an omitted optional
// input holds its own slot); params and out buffers are not part of it.
struct TargetKey {
  Device device;
  std::vector<std::optional<std::pair<DType, Shape>>> inputs;
  friend bool operator==(const TargetKey&, const TargetKey&) = default;
};
struct TargetKeyHash {
  std::size_t operator()(const TargetKey& k) const noexcept;
};

// A kernel a target built, and whether it has been sent its one tuning request.
struct BuiltTargetKernel {
  explicit BuiltTargetKernel(TargetKernel k) : kernel(std::move(k)) {}
  TargetKernel kernel;
  std::atomic<bool> tune_sent{false};
};

struct Binding {
  explicit Binding(const std::vector<InterfaceDecl>& interfaces) {
    for (const InterfaceDecl& i : interfaces)
      caches.push_back(std::make_unique<InterfaceCache>(i.call_ops));
  }

  // Selection: `resolved` once a target is selected; `builder` set when a target serves the op.
  std::atomic<bool> resolved{false};  // stored last, with release, after builder and serving
  std::optional<Target> serving;
  std::optional<KernelBuilder> builder;

  std::vector<std::unique_ptr<InterfaceCache>> caches;  // per interface
  std::mutex build_mutex;                               // serialises building
  mutable std::shared_mutex target_mutex;
  std::unordered_map<TargetKey, std::shared_ptr<BuiltTargetKernel>, TargetKeyHash> target_kernels;

  // The miss path of Op::entry_for_call (op_kernels.cpp), out of line so that the hit path stays
  // small: under `build_mutex`, selects the implementation for `call`, finds or builds the entry
  // of (implementation, identity) and caches it for `call`, whose hash is `hash`.
  // Returns the table's slot, which lives as long as this binding.
  const std::shared_ptr<KernelInterface>& build_entry(Op& op, int interface, const void* call,
                                                      std::size_t hash);

  // Drops the built entries and target kernels (the entries live on while someone holds them);
  // the call-spec tables stay (Note [Binding group]).
  void clear();

  // How many retired groups `op` keeps (Note [Binding reclamation]); for tests.
  static std::size_t retired_count(const Op& op);
};

}  // namespace tileops::detail
