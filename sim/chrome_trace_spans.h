// The runtime's story in a run's trace, as spans for the timeline (sim/chrome_trace.h): what
// the runtime marks (TraceMark) read back into stretches of scheduling steps. No Kafka
// counterpart: Kafka Streams logs these moves (TaskManager, StreamThread and KafkaStreams
// state changes at INFO) where we mark them.
//  - a task's lifecycle: one span per state of each task incarnation, from its mark
//    "task/<incarnation> <type> FROM -> TO" to the incarnation's next one (CLOSED, the last,
//    one step long); a recycled task's SUSPENDED ends at "task/recycle <id> -> <type>";
//  - rebalances: a stream thread's stretch in PARTITIONS_ASSIGNED (marks "thread/<name> FROM
//    -> TO") and the client's in REBALANCING (marks "runtime/<app> FROM -> TO");
//  - faults (marks "fault/..."): an outage with a duration in its mark (leader_unavailable,
//    slow_fetch: milliseconds) spans until virtual time has passed it; a scripted outage
//    ("leader taken away P") until its "scenario/leader back P"; the others take one step.
// A span still open when the run ends ends there ("run ended").
//
// Thread-safety: free functions of a finished simulation.
#ifndef RESTORESIM_SIM_CHROME_TRACE_SPANS_H_
#define RESTORESIM_SIM_CHROME_TRACE_SPANS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulation.h"

namespace restoresim::sim {

struct StorySpan {
  std::string track;      // the track it is drawn on: "task 0_1#4", "rebalances", "faults"
  std::string name;       // "RESTORING", "rebalance app-StreamThread-1", "leader_unavailable"
  std::string category;   // "task", "rebalance", "fault"
  SimThreadId thread = kNoSimThread;  // the thread whose mark opened it
  uint64_t start_step = 0;
  uint64_t end_step = 0;  // past the last step: > start_step
  TimeNs start_ns = 0;
  std::string ended_by;   // the mark that ended it, or "run ended"
  int64_t value = 0;      // a fault's mark value (milliseconds, records); 0 otherwise
};

// Every span of the three kinds, ordered by (start step, track, name).
std::vector<StorySpan> FindStorySpans(const Simulation& sim);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_CHROME_TRACE_SPANS_H_
