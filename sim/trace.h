// The trace of one simulated run: every decision and event, in a compact fixed-size form, folded
// into a stable hash as it is recorded. The hash is the run's fingerprint: the same (program,
// seed, options) must give the same hash in every process (the determinism check). In kFull
// mode the events are also kept, for replays, timelines (chrome_trace.h) and shrinking.
//
// Thread-safety: owned by one simulation; not thread-safe.
#ifndef RESTORESIM_SIM_TRACE_H_
#define RESTORESIM_SIM_TRACE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/util/sim_hooks.h"
#include "core/util/stable_hash.h"

namespace restoresim::sim {

// Append only: the numeric values enter trace hashes.
enum class TraceKind : uint8_t {
  kDecision = 0,  // thread `thread` chosen to run; arg = number of runnable threads
  kPoint,         // `thread` reached a scheduling point: op, object
  kBlock,         // `thread` blocked: op, object; arg = deadline (ns) or -1
  kWake,          // `thread` woke `arg` (a thread id) through object
  kTimeout,       // `thread` woke because its deadline passed
  kTimeAdvance,   // virtual time jumped to time_ns (all threads were blocked)
  kSpawn,         // `thread` created thread `arg`
  kExit,          // `thread` finished
  kChoice,        // a non-thread choice: object = choice kind, arg = chosen value
  kMark,          // user event: object = interned string id (category), arg = value
  kFailure,       // the run failed (deadlock, check, budget, exception)
};
std::string_view TraceKindName(TraceKind kind);

struct TraceEvent {
  TimeNs time_ns;
  uint64_t step;
  int64_t arg;
  uint32_t object;
  SimThreadId thread;
  TraceKind kind;
  SimOp op;
};

enum class TraceMode : uint8_t { kHashOnly, kFull };

class Trace {
 public:
  explicit Trace(TraceMode mode) : mode_(mode) {}

  // Hashes what an event says, not where it sits: the step is its position in the sequence,
  // and virtual time enters through the kTimeAdvance events that change it.
  void Record(const TraceEvent& e) {
    hash_.Add(static_cast<uint64_t>(e.arg));
    hash_.Add((uint64_t{e.object} << 32) | (uint64_t{e.thread} << 16) |
              (uint64_t{static_cast<uint8_t>(e.kind)} << 8) | static_cast<uint8_t>(e.op));
    ++event_count_;
    // Kept out of line: the hash-only mode (every sweep) pays two multiplies per event.
    if (mode_ == TraceMode::kFull) Keep(e);
  }

  // The id of a mark's text "category/name": the low 32 bits of its stable hash, the same in
  // both modes (so both modes give the same trace hash). kFull mode keeps the text for export.
  uint32_t MarkId(std::string_view category, std::string_view name);
  // The text of a mark id seen in kFull mode; empty if unknown.
  std::string_view MarkText(uint32_t id) const;

  TraceMode mode() const { return mode_; }
  uint64_t Hash() const { return hash_.Value(); }
  uint64_t event_count() const { return event_count_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  void Keep(const TraceEvent& e);

  // Recent marks' texts and ids, by a slot their text picks: most marks repeat a few texts
  // ("transport" and a call's name), and comparing a text costs less than hashing it byte by
  // byte. Only a cache: an id is always the text's hash.
  struct MarkMemo {
    std::string category;
    std::string name;
    uint32_t id = 0;
    bool used = false;
  };
  static constexpr size_t kMarkMemoSlots = 64;
  std::array<MarkMemo, kMarkMemoSlots> mark_memo_;

  TraceMode mode_;
  StableHash hash_;
  uint64_t event_count_ = 0;
  std::vector<TraceEvent> events_;
  absl::flat_hash_map<uint32_t, std::string> mark_texts_;
};

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_TRACE_H_
