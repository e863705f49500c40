// Dispatch events: the structured record of one kernel selection, the process-wide sinks that
// receive them, and their one text format (TILEOPS_LOG=dispatch). Logs and tools read records;
// nothing parses log text.
//
// Note [Dispatch events]
// Every selection of an implementation for a call spec — the cache miss of a kernel_for, and
// key_for — builds one DispatchEvent: which op instance and interface selected, for which call
// spec, what each installed implementation said about it (serves, unavailable on the device or
// its architecture, refuses with its reason, forced away by TILEOPS_FORCE) and the outcome (the
// winner, or why there is none). The selection's errors are formatted from the same record, so a
// log line, a tool's table and an exception always agree. A kernel_for hit selects nothing and
// builds no event: the hot path neither reads the sinks nor allocates. On a miss the event is
// handed to every installed sink and, under TILEOPS_LOG=dispatch, printed to stderr through
// format(); with neither, it is dropped once the error text, if any, is made. Op::explain_call
// builds the same events for a call it states on meta tensors and returns them instead (nothing is
// selected, so no sink hears them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/device.hpp"
#include "tileops/op/call_spec.hpp"

namespace tileops {

// What one implementation says about a call, in the order selection asks (availability first:
// docs/framework.md, Kernel selection).
enum class VerdictKind : std::uint8_t {
  kServes,       // available and not refusing: the winner, an outranked one, or one of a tie
  kWrongDevice,  // does not run on the call's device type (or the call's device is unknown)
  kWrongArch,    // runs on the device type but is not built for the device's architecture
  kRefuses,      // its refusal(call) gave a reason
  kForcedAway,   // serves, but TILEOPS_FORCE names another implementation
};

struct ImplementationVerdict {
  std::string key;         // the implementation's stable name
  std::string class_name;  // for messages
  VerdictKind kind = VerdictKind::kServes;
  std::string reason;  // kWrongDevice, kWrongArch, kRefuses: why it does not serve; else empty

  bool serves() const noexcept { return kind == VerdictKind::kServes; }
};

// How a selection ended.
enum class DispatchOutcome : std::uint8_t {
  kSelected,          // one winner (DispatchEvent::winner)
  kAmbiguous,         // several serve and none is preferred over the others (::ambiguous)
  kNothingServes,     // every implementation refuses or is unavailable; or none is installed
  kNotOnDevice,       // no implementation lists the call's device type (OpNotAvailableError)
  kForcedKeyRefuses,  // the implementation TILEOPS_FORCE names does not serve the call
};

struct DispatchEvent {
  std::string op;                // the op class ("RMSNormFwdOp")
  std::string instance;          // the instance key ("RMSNormFwdOp#0")
  std::string interface;         // the kernel interface's name ("rms_norm")
  std::string call;              // the call spec's str()
  std::optional<Device> device;  // the call's device; nullopt when nothing decided one
  DeviceFacts facts;             // the facts selection read: stated by the spec, or the device's
  std::string forced;  // TILEOPS_FORCE's key when it names an implementation here; else empty
  std::vector<ImplementationVerdict> verdicts;  // every implementation, in installation order
  DispatchOutcome outcome = DispatchOutcome::kNothingServes;
  std::string winner;                  // kSelected: the selected key; else empty
  std::vector<std::string> ambiguous;  // kAmbiguous: the keys that all serve; else empty
};

// One line, the text TILEOPS_LOG=dispatch prints after "tileops dispatch: ":
//   "RMSNormFwdOp#0.rms_norm: rms_norm_blocked_cpu for NormCall(...); refused: key (Class: why)"
// and, without a winner, "... nothing (<why>) for ...". Serving implementations that lose on
// precedence are not listed; forced-away ones are ("; forced away: a, b").
std::string format(const DispatchEvent& event);
// The outcome as format() writes it: the winner's key, or "nothing (<why>)" with why one of
// "ambiguous: a, b", "no implementation serves", "no implementation is installed", "no
// implementation runs on <device>", "TILEOPS_FORCE=<key> refuses".
std::string outcome_text(const DispatchEvent& event);
// "serves", "wrong device", "wrong architecture", "refuses", "forced away".
std::string_view verdict_kind_name(VerdictKind kind);

// A receiver of dispatch events. Calls to one sink are serialised, so it needs no lock of its own;
// different sinks may run at once on different threads. A sink must not throw.
using DispatchSink = std::function<void(const DispatchEvent&)>;
using DispatchSinkId = std::uint64_t;

// Installs `sink` for every later selection in the process; any number may be installed.
DispatchSinkId add_dispatch_sink(DispatchSink sink);
// Removes a sink. When it returns the sink is not running on another thread and is never called
// again; so it waits for a call of that sink in progress elsewhere (a sink may remove itself: that
// returns at once). An unknown id is ignored.
void remove_dispatch_sink(DispatchSinkId id);

// A sink installed for the guard's lifetime.
class ScopedDispatchSink {
 public:
  explicit ScopedDispatchSink(DispatchSink sink) : id_(add_dispatch_sink(std::move(sink))) {}
  ~ScopedDispatchSink() { remove_dispatch_sink(id_); }
  ScopedDispatchSink(const ScopedDispatchSink&) = delete;
  ScopedDispatchSink& operator=(const ScopedDispatchSink&) = delete;

 private:
  DispatchSinkId id_;
};

}  // namespace tileops
