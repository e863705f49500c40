// Dispatch events: their text and the process-wide sinks (Note [Dispatch events]).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "op/dispatch_sinks.hpp"

namespace tileops {
namespace {

// Note [Dispatch sink removal]
// Publishing copies the list of slots under the registry's mutex and calls each sink outside it,
// holding only that slot's own mutex; removal takes the slot out of the list and then locks the
// slot and marks it removed. So a sink runs on one thread at a time, a slow sink delays neither
// the other sinks nor add/remove of others, and once remove_dispatch_sink returns no call of that
// sink is running or will start. The slot's mutex is recursive so that a sink may remove itself
// (or select a kernel, which publishes to it again) without deadlocking on its own slot.
struct SinkSlot {
  explicit SinkSlot(DispatchSink s) : sink(std::move(s)) {}
  DispatchSink sink;
  std::recursive_mutex running;
  bool removed = false;  // guarded by `running`
};

struct SinkRegistry {
  std::mutex mutex;
  std::vector<std::pair<DispatchSinkId, std::shared_ptr<SinkSlot>>> slots;
  DispatchSinkId next_id = 1;
  std::atomic<std::size_t> installed{0};  // slots.size(), read without the mutex
};

SinkRegistry& sinks() {
  static SinkRegistry r;
  return r;
}

bool log_dispatch() {
  const char* v = std::getenv("TILEOPS_LOG");
  return v && std::strstr(v, "dispatch") != nullptr;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

std::string why_nothing(const DispatchEvent& e) {
  switch (e.outcome) {
    case DispatchOutcome::kAmbiguous:
      return "ambiguous: " + join(e.ambiguous, ", ");
    case DispatchOutcome::kNotOnDevice:
      return "no implementation runs on " + (e.device ? e.device->str() : "an unknown device");
    case DispatchOutcome::kForcedKeyRefuses:
      return "TILEOPS_FORCE=" + e.forced + " refuses";
    case DispatchOutcome::kNothingServes:
      return e.verdicts.empty() ? "no implementation is installed" : "no implementation serves";
    case DispatchOutcome::kSelected:
      break;
  }
  return {};
}

}  // namespace

std::string outcome_text(const DispatchEvent& e) {
  return e.outcome == DispatchOutcome::kSelected ? e.winner : "nothing (" + why_nothing(e) + ")";
}

std::string format(const DispatchEvent& e) {
  std::string s = fmt::format("{}.{}: {} for {}", e.instance, e.interface, outcome_text(e), e.call);
  std::vector<std::string> refused, forced_away;
  for (const ImplementationVerdict& v : e.verdicts) {
    if (v.kind == VerdictKind::kForcedAway)
      forced_away.push_back(v.key);
    else if (!v.serves())
      refused.push_back(fmt::format("{} ({}: {})", v.key, v.class_name, v.reason));
  }
  if (!refused.empty()) s += "; refused: " + join(refused, "; ");
  if (!forced_away.empty()) s += "; forced away: " + join(forced_away, ", ");
  return s;
}

std::string_view verdict_kind_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kServes:
      return "serves";
    case VerdictKind::kWrongDevice:
      return "wrong device";
    case VerdictKind::kWrongArch:
      return "wrong architecture";
    case VerdictKind::kRefuses:
      return "refuses";
    case VerdictKind::kForcedAway:
      return "forced away";
  }
  return "?";
}

DispatchSinkId add_dispatch_sink(DispatchSink sink) {
  SinkRegistry& r = sinks();
  std::lock_guard<std::mutex> lock(r.mutex);
  const DispatchSinkId id = r.next_id++;
  r.slots.emplace_back(id, std::make_shared<SinkSlot>(std::move(sink)));
  r.installed.store(r.slots.size(), std::memory_order_release);
  return id;
}

void remove_dispatch_sink(DispatchSinkId id) {
  SinkRegistry& r = sinks();
  std::shared_ptr<SinkSlot> slot;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it =
        std::find_if(r.slots.begin(), r.slots.end(), [id](const auto& s) { return s.first == id; });
    if (it == r.slots.end()) return;
    slot = std::move(it->second);
    r.slots.erase(it);
    r.installed.store(r.slots.size(), std::memory_order_release);
  }
  std::lock_guard<std::recursive_mutex> running(slot->running);  // Note [Dispatch sink removal]
  slot->removed = true;
}

void detail::publish_dispatch(const DispatchEvent& event) {
  SinkRegistry& r = sinks();
  if (r.installed.load(std::memory_order_acquire) > 0) {
    std::vector<std::shared_ptr<SinkSlot>> slots;
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      for (const auto& s : r.slots) slots.push_back(s.second);
    }
    for (const auto& slot : slots) {
      std::lock_guard<std::recursive_mutex> running(slot->running);
      if (!slot->removed) slot->sink(event);
    }
  }
  if (log_dispatch()) std::fprintf(stderr, "tileops dispatch: %s\n", format(event).c_str());
}

}  // namespace tileops
