// The binding group of an instance (seeds: class-structure Table 3): the selected target and
// every cache built under it. Note [Binding group]: the group is one object, replaced whole by
// reset_binding; a retired group is emptied but kept until the op dies, so a thread still reading
// it never touches freed memory, and entries are reference counted, so one running in another
// thread outlives the reset.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "tileops/op/backend.hpp"
#include "tileops/op/identity.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops::detail {

// A call spec as a cache key: its hash, and either a copy it owns or (for a probe) the caller's.
struct CallKey {
  std::size_t hash = 0;
  std::shared_ptr<const void> owned;
  const void* spec = nullptr;
};
struct CallKeyHash {
  std::size_t operator()(const CallKey& k) const noexcept { return k.hash; }
};
struct CallKeyEq {
  const CallSpecOps* ops;
  bool operator()(const CallKey& a, const CallKey& b) const { return a.hash == b.hash && ops->equals(a.spec, b.spec); }
};

struct BuiltKey {
  int type = -1;  // index into the installed table
  Identity identity;
  friend bool operator==(const BuiltKey&, const BuiltKey&) = default;
};
struct BuiltKeyHash {
  std::size_t operator()(const BuiltKey& k) const noexcept { return k.identity.hash() * 31 + static_cast<std::size_t>(k.type); }
};

// _entries_by_call and _built_entries of one interface.
struct InterfaceCache {
  explicit InterfaceCache(const CallSpecOps* ops) : by_call(8, CallKeyHash{}, CallKeyEq{ops}) {}
  mutable std::shared_mutex mutex;
  std::unordered_map<CallKey, std::shared_ptr<KernelInterface>, CallKeyHash, CallKeyEq> by_call;
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
    for (const InterfaceDecl& i : interfaces) caches.push_back(std::make_unique<InterfaceCache>(i.call_ops));
  }

  // Selection: `resolved` once a target is selected; `builder` set when a target serves the op.
  std::atomic<bool> resolved{false};  // stored last, with release, after builder and serving
  std::optional<Target> serving;
  std::optional<KernelBuilder> builder;

  std::vector<std::unique_ptr<InterfaceCache>> caches;  // per interface
  std::mutex build_mutex;                                // serialises building
  mutable std::shared_mutex target_mutex;
  std::unordered_map<TargetKey, std::shared_ptr<BuiltTargetKernel>, TargetKeyHash> target_kernels;

  // Drops every cache (the entries themselves live on while someone holds them).
  void clear();
};

}  // namespace tileops::detail
