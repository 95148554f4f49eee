// Exports a simulated run as a Chrome trace-event file (the JSON object format), which Perfetto
// UI (ui.perfetto.dev) and chrome://tracing open as a timeline.
//
// Layout: process 1 is the run; every simulated thread t is a track with tid t + 1, named after
// the thread and sorted by id; tid 0 ("scheduler") holds events recorded outside any simulated
// thread (the spawn of "main") and the virtual-time counter.
//
// The x axis is the scheduling step, not time: an event's "ts" (microseconds, as the format
// defines it) is the trace event's `step`, so 1 us on the axis is one scheduling decision.
// Virtual time stands still while threads can run, so it would squash whole runs into one
// instant; instead every event carries its virtual time in args.virtual_time_ns, and a counter
// track "virtual_time_ms" shows where time jumped. No "displayTimeUnit" is written: the
// timestamps are microseconds, as the format defines them, and the viewer's default applies.
//
// Events:
//  - "X" slices, one per stretch of steps during which a thread was the running thread: from a
//    decision choosing it to the next decision choosing another thread, its block, or its
//    exit. Each is named after what the thread did last in it (its last scheduling operation,
//    e.g. "mutex.lock", "exit"; "run" when there was none).
//  - "X" slices, one per restoration of a task on a restore thread (its marks "restore/register
//    T" to the first "restore/restored T", "unregister T", "corrupted T" or "failed T"; to the
//    end of the run when none came), named "restore T" (an active) or "update T" (a standby),
//    category "restoration", on tracks of their own beside the restore thread's (tid
//    kRestorationTidBase + thread * kRestorationLanesMax + lane, named "<thread> restorations",
//    one lane per restoration in flight at once).
//  - "X" slices of the runtime's story (sim/chrome_trace_spans.h): each task incarnation's
//    lifecycle states (category "task", a track "task <incarnation> (<type>)" each), the
//    rebalances (category "rebalance", track "rebalances") and the injected faults (category
//    "fault", track "faults"), with lanes where spans overlap (tid kStoryTidBase + track *
//    kStoryLanesMax + lane), sorted below every thread's track.
//  - "i" instants on the acting thread's track: blocks, wakes, timeouts, spawns, exits,
//    non-thread choices and user marks (category in "cat"); scheduling points only with
//    ChromeTraceInfo::sync_instants; the failure of the run is a global instant
//    "FAILURE: <outcome>".
//  - "M" metadata (process and track names, sort order), category "__metadata".
//  - "C" counter samples of marks in category "counter" (TraceMark("counter", name, value)):
//    one counter track per name, e.g. the runtime's "restore_remaining <restore thread>".
//  - "C" counter samples of the virtual time (ms) at every jump. A counter's args are plotted
//    as series, so these carry only the one value, not virtual_time_ns.
//
// A run needs TraceMode::kFull for a timeline; in kHashOnly mode only the tracks and the
// metadata are written. The output is a pure function of the simulation and `info`: the same
// run exports byte-identical JSON. Linear in the number of trace events (streams the events
// instead of building a JSON tree).
//
// Thread-safety: free functions; `sim` must not be running (export a finished simulation).
#ifndef RESTORESIM_SIM_CHROME_TRACE_H_
#define RESTORESIM_SIM_CHROME_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/port/file_system.h"
#include "sim/simulation.h"

namespace restoresim::sim {

// Describes the run in the file's "metadata" (and the process name); not otherwise interpreted.
struct ChromeTraceInfo {
  std::string program;   // e.g. "demo.abba_deadlock"
  uint64_t seed = 0;     // written as a decimal string (a JSON number loses bits above 2^53)
  std::string strategy;  // e.g. "pct:3:50"
  std::string outcome;   // OutcomeKindName of the run, e.g. "deadlock"
  std::string message;   // the outcome's message; shown in the FAILURE event's args
  // Whether every scheduling point (mutex lock and unlock, atomic operations, yields: most of a
  // run's events) is an instant of its own; off by default (slices still name the last one).
  bool sync_instants = false;
};

// The run as a Chrome trace-event JSON document.
std::string ChromeTraceJson(const Simulation& sim, const ChromeTraceInfo& info);

// Writes ChromeTraceJson(sim, info) to `path` with WriteFileAtomically.
[[nodiscard]] absl::Status WriteChromeTrace(FileSystem& fs, const std::string& path,
                                            const Simulation& sim, const ChromeTraceInfo& info);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_CHROME_TRACE_H_
