// The soak's fault schedule: which faults `restoresim soak` injects, when and where, drawn from
// a seed before the soak starts (printed at its start, saved beside a violation), so a run's
// faults can be replayed exactly by giving the same seed, duration and fault kinds. The real
// world around the faults (when a rebalance completes, what a broker elects) is not replayed:
// the schedule is the part of a soak that a seed decides.
//
// One fault at a time: each fault lasts its hold (a node or instance is down that long, an
// instance paused or added that long), and the next one begins a gap after it recovered, so
// every fault is seen recovering before the next begins. A fault's target is drawn as an
// index; the driver resolves it at the moment the fault begins (the k-th instance alive then,
// the leader of partition p then).
//
// Thread-safety: plain values and pure functions.
#ifndef RESTORESIM_SOAK_SOAK_SCHEDULE_H_
#define RESTORESIM_SOAK_SOAK_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"

namespace restoresim::soak {

enum class FaultKind : uint8_t {
  kBrokerKill,         // kill -9 a broker node, restart it after the hold
  kLeaderKill,         // kill -9 the node leading a changelog partition, restart after the hold
  kInstanceKill,       // SIGKILL an instance, restart it on its state directory after the hold
  kInstanceBounce,     // close an instance cleanly, start it again after the hold
  kInstanceAdd,        // add an instance (a new state directory), close it cleanly after the hold
  kCheckpointRestore,  // a CRaC checkpoint notification to an instance, then restore
  kPause,              // pause an instance's topology (KIP-834), resume after the hold
  kDiskFull,           // an instance's file-system port fails writes (ENOSPC) for the hold
  kCount,
};

// "broker-kill", "leader-kill", ...: the names --faults takes.
std::string_view FaultName(FaultKind kind);
std::optional<FaultKind> FaultByName(std::string_view name);
std::span<const FaultKind> AllFaultKinds();
// The broker faults need a cluster whose nodes the soak controls.
bool NeedsBrokerControl(FaultKind kind);

// "all", "none", or a comma-separated list of names; an unknown or repeated name is an error
// naming it and the names there are.
absl::StatusOr<std::vector<FaultKind>> ParseFaultKinds(std::string_view text);
std::string FaultKindsText(std::span<const FaultKind> kinds);

struct Fault {
  TimeNs at_ns = 0;    // from the soak's start
  FaultKind kind = FaultKind::kBrokerKill;
  uint32_t target = 0;  // a broker node (1-based), an instance slot or a partition: see kind
  TimeNs hold_ns = 0;  // how long the fault lasts before its recovery
  std::string ToString() const;
};

struct ScheduleParams {
  uint64_t seed = 0;
  TimeNs duration_ns = 0;
  std::vector<FaultKind> kinds;  // drawn from uniformly; empty: no faults
  uint32_t brokers = 3;
  uint32_t instances = 3;
  uint32_t partitions = 6;
  TimeNs gap_min_ns = 10 * kSecond;  // between a fault's recovery and the next fault
  TimeNs gap_max_ns = 30 * kSecond;
  TimeNs settle_ns = 20 * kSecond;   // no fault begins in the soak's first settle_ns
};

// Faults whose recovery falls before duration_ns, in time order. A pure function of params.
std::vector<Fault> DrawSchedule(const ScheduleParams& params);
// One line per fault: "  +0m42.0s  instance-kill  target 2  hold 7.5s".
std::string ScheduleText(std::span<const Fault> faults);

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_SCHEDULE_H_
