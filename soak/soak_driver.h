// `restoresim soak`: the runtime for real, under faults. N instances (processes running
// `restoresim soak-instance`, soak_instance.h) of one application over a local Kafka cluster
// the soak starts itself (three nodes, tools/kafka/broker), or a running one of that script
// (--cluster, whose nodes it can kill), or any cluster (--bootstrap-servers: no broker
// faults). Input arrives at a steady rate (soak_producer.h); faults follow a schedule drawn
// from the seed (soak_schedule.h), printed at the start.
//
// Judged: every instance's oracle online (a violation ends the instance with exit 3 and the
// soak with its events and schedule saved, and a line to re-run the same schedule); every
// killed instance's state directory audited before its restart, and every state directory at
// the end (soak_audit.h: each store the fold of its changelog up to its own offset); at the
// end, after the group committed the whole input, the counts against the input (no loss;
// duplicates counted under at-least-once, none allowed under exactly once).
//
// Thread-safety: RunSoak on one thread; it starts the producer's.
#ifndef RESTORESIM_SOAK_SOAK_DRIVER_H_
#define RESTORESIM_SOAK_SOAK_DRIVER_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/sync/clock.h"
#include "soak/soak_schedule.h"

namespace restoresim::soak {

inline constexpr int kSoakExitOk = 0;
inline constexpr int kSoakExitFindings = 1;  // an invariant, a loss, a failed runtime
inline constexpr int kSoakExitUsage = 2;     // bad options, a cluster that cannot be had

struct SoakOptions {
  std::string bootstrap;  // a cluster of any kind (no broker faults)
  std::string cluster;    // a running tools/kafka/broker cluster (broker faults allowed)
  int32_t brokers = 3;    // of the cluster the soak starts itself
  int32_t instances = 3;
  int32_t threads = 2;
  int32_t partitions = 6;
  int32_t keys = 200;
  int64_t rate = 200;  // input records per second
  TimeNs duration_ns = 10 * 60 * kSecond;
  uint64_t seed = 0;
  std::vector<FaultKind> faults;
  std::string guarantee = "at_least_once";
  // restoresim.group.protocol of every instance: classic, or streams (the broker places tasks
  // and standbys: a streams group, KIP-1071).
  std::string group_protocol = "classic";
  std::string mutation;  // planted in every instance's runtime ("" none)
  std::string dir;       // state directories, events, statuses, logs, the schedule
  std::string exe;       // the restoresim binary the instances run
  TimeNs progress_every_ns = 10 * kSecond;
  bool json = false;
};

// Runs the soak; the progress and the summary (or JSON) go to `out`, and messages about the
// set-up to stderr. Returns kSoakExit*.
int RunSoak(const SoakOptions& options, std::FILE* out);

// Audits the state directory `state_dir` of application `app_id` (the soak's topics: input
// "<app>-input", changelog "<app>-counts-changelog", options.partitions each) against the
// cluster of --bootstrap-servers or --cluster, as the soak does after a kill: a soak's state
// directories are kept, so a finding can be looked at again. Returns kSoakExit*.
int AuditStateDirectory(const SoakOptions& options, const std::string& app_id,
                        const std::string& state_dir, std::FILE* out);

// The command line that re-runs `options` (the same seed, duration, faults, sizes).
std::string RerunLine(const SoakOptions& options);

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_DRIVER_H_
