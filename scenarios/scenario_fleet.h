// The pieces the named scenarios (catalogue_*.cc) are built from: the workload (input,
// initial changelogs, a state directory as an earlier instance left it, compaction-like
// truncation), the catalogue's tempo, and a Fleet — runtime instances made of real
// StreamThreads that a scenario rebalances by hand.
//
// Why a Fleet and not several Runtimes: a Runtime names its threads after the application id,
// so two Runtimes of one application in one world would have threads (and restore threads)
// of the same name, which the oracle could not tell apart. A Fleet builds each instance the
// way Runtime::Start does (one StateDirectory and one state directory per instance, shared by
// its threads), with threads named "<instance>-StreamThread-<n>". Scenarios that need one
// instance use the Runtime itself.
//
// Thread-safety: the program's main simulated thread only.
#ifndef RESTORESIM_SCENARIOS_SCENARIO_FLEET_H_
#define RESTORESIM_SCENARIOS_SCENARIO_FLEET_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/runtime/runtime.h"
#include "core/runtime/runtime_config.h"
#include "core/runtime/state_directory.h"
#include "core/runtime/stream_thread.h"
#include "core/runtime/topology_pause.h"
#include "scenarios/runtime_world.h"
#include "scenarios/scenario_checks.h"
#include "sim/program.h"

namespace restoresim::scenarios {

// The fleet's first two members, instances a and b, as the stories name them.
inline constexpr size_t kA = 0;
inline constexpr size_t kB = 1;

// ---- tempo: every scenario runs its story in a few seconds of virtual time ----
inline constexpr TimeNs kPollNs = 20 * kMillisecond;
inline constexpr TimeNs kCommitIntervalNs = 100 * kMillisecond;
// The tail's shutdown: longer than the broker's request timeout (30 s), which a request that
// drew an injected timeout just before the faults were healed may still be waiting out.
inline constexpr TimeNs kShutdownTimeoutNs = 35 * kSecond;
inline constexpr TimeNs kConvergeNsMax = 60 * kSecond;

// ---- workload ----
// n input records on partition p: keys k0..k7, values 1..5, one in ten a tombstone. The
// contents come from `random` (the program's data stream), never from schedule choices.
void ProduceInput(testing::RuntimeWorld& w, RandomSource& random, int32_t p, int n);

// The state directory `state_dir` ("<state.dir>/<application.id>") as an earlier instance
// left it for task 0_p: each store of the topology holding the fold of its changelog's first
// `offset` records and a checkpoint at `offset` (a clean close).
void LeaveCheckpoint(testing::RuntimeWorld& w, const std::string& state_dir, int32_t p,
                     int64_t offset);

// Deletes partition p's changelog records below `before`, as compaction or retention would,
// without changing what the changelog folds to: every key of a deleted record must have a
// later record. WriteChangelog cycles through 7 keys, so any `before` at least 7 records
// below the initial changelog's end is harmless (RS_CHECKed). Returns the new log start.
int64_t TruncateHarmlessly(testing::RuntimeWorld& w, int32_t p, int64_t before,
                           std::string_view store = "counts");
// The highest `before` TruncateHarmlessly accepts for that changelog now (every key's last
// record lies at or above it).
int64_t HarmlessTruncationMax(testing::RuntimeWorld& w, int32_t p,
                              std::string_view store = "counts");

// A broker fault profile drawn with env.Choose: each retryable fault on when Choose(2) == 1,
// at 1 + Choose(cap) per mille (the swarm caps of broker_faults.cc); never producer fencing.
// All zero (no faults) is what the shrinker drives it to.
fakes::BrokerFaults DrawBrokerFaults(sim::RunEnv& env);

// The program's parameters as a trace mark, so a timeline and a failing run show them.
void NoteParams(const std::string& text);

// ---- a single Runtime instance ----
RuntimeConfig CatalogueRuntimeConfig(int32_t threads, int32_t restore_max_poll_records);
std::vector<Member> MembersOf(Runtime& runtime, const RuntimeConfig& config);

// ---- fleets of StreamThreads ----
struct FleetOptions {
  uint64_t first_incarnation = 0;  // a fleet restarted in the same world continues numbering
  int32_t instances = 2;
  int32_t threads_per_instance = 1;
  int32_t restore_max_poll_records = 20;
  TimeNs checkpoint_interval_ns = 500 * kMillisecond;
  StoreOpener open_store;  // empty: the world's LogStores
  bool exactly_once = false;  // processing.guarantee=exactly_once_v2
  TimeNs transaction_timeout_ns = 10 * kSecond;  // exactly once: transaction.timeout.ms
};

// One member's part of a generation.
struct MemberAssignment {
  std::set<int32_t> actives;
  std::set<int32_t> standbys;
};
// One generation: one entry per fleet member (by index).
using Generation = std::vector<MemberAssignment>;

class Fleet {
 public:
  Fleet(testing::RuntimeWorld& w, const FleetOptions& options);
  ~Fleet();

  // Starts every thread and waits until all have joined the (manual) group.
  void Start();
  size_t size() const { return threads_.size(); }
  StreamThread& thread(size_t i) { return *threads_[i]; }
  int32_t instance_of(size_t i) const { return instance_of_[i]; }
  const std::string& member_id(size_t i) const { return member_ids_[i]; }
  std::vector<Member> members();
  // Incarnation numbers issued so far: a fleet restarted in the same world starts after them.
  uint64_t incarnations_issued() { return incarnations_.Load(); }
  // Whether member i is in the group now (not lost, or lost and rejoined).
  bool active(size_t i);
  // Waits (virtual time, bounded) until every member is in the group again.
  void AwaitAllActive(sim::RunEnv& env);
  // Waits (virtual time, bounded) until member i has handed each of `partitions` to its
  // restore thread (or already runs it): the moment "while it restores" scenarios start from.
  void AwaitHandedOver(sim::RunEnv& env, size_t i, const std::set<int32_t>& partitions);

  // Installs one generation. Members not in the group must be given nothing.
  absl::Status Rebalance(const Generation& generation);
  absl::Status Lose(size_t i);
  // Pauses (or resumes) the topology of instance `instance` (KIP-834: each instance is a
  // client with a pause of its own, read by its threads).
  void SetPaused(int32_t instance, bool paused);
  // Shuts every thread down, within timeout_ns in all; returns the first error.
  absl::Status Shutdown(TimeNs timeout_ns, bool clean = true);

  // A generation drawn with env.Choose over the members in the group now: each partition
  // active on one (0: the first), and, when `standbys`, maybe (Choose(2) == 1) a standby on
  // one of another instance.
  Generation Draw(sim::RunEnv& env, int32_t partitions, bool standbys);
  // Every partition active on member `active_member`, standbys (if any) on the first member
  // of the next instance.
  Generation AllOn(size_t active_member, int32_t partitions, bool standbys) const;

 private:
  testing::RuntimeWorld& w_;
  std::vector<std::unique_ptr<StateDirectory>> directories_;
  std::vector<std::unique_ptr<TopologyPause>> pauses_;  // per instance; outlive the threads
  Atomic<uint64_t> incarnations_{0, "fleet_incarnations"};
  std::vector<std::unique_ptr<StreamThread>> threads_;
  std::vector<int32_t> instance_of_;
  std::vector<std::string> state_dirs_;
  std::vector<std::string> member_ids_;
};

// ---- the tail every scenario ends with ----
struct FinishOptions {
  int64_t standby_lag_records_max = 0;
  TimeNs converge_ns_max = kConvergeNsMax;
  // false: the changelogs are not held to the reference model of the input — for a run in
  // which a failed thread's client closed tasks dirty (commits failing under faults), where
  // at-least-once may process input twice by design. Every other check stays.
  bool reference_counts = true;
};

// Heals broker faults, then: liveness (AwaitConverged: every task running, input committed,
// standbys caught up), running stores equal their changelogs, a clean shutdown within
// kShutdownTimeoutNs with the oracle's final checks, changelogs equal the reference model of
// their baselines, standby stores and lag read back from disk.
void FinishFleet(sim::RunEnv& env, testing::RuntimeWorld& w, Fleet& fleet, int32_t partitions,
                 const Baselines& baselines, const FinishOptions& options = {});
// The same for one Runtime (which has no standbys).
void FinishRuntime(sim::RunEnv& env, testing::RuntimeWorld& w, Runtime& runtime,
                   const RuntimeConfig& config, int32_t partitions, const Baselines& baselines,
                   const FinishOptions& options = {});

}  // namespace restoresim::scenarios

#endif  // RESTORESIM_SCENARIOS_SCENARIO_FLEET_H_
