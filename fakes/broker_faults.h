// The fake broker's fault model: what it injects, and what it keeps recoverable.
//
// Injected (each decided per call from a RandomSource at a per-mille rate; every draw makes the
// answer 0 the quiet one: no fault, a fault kind off, the lowest rate, the smallest extra latency,
// the fewest records withheld, the shortest leaderless period — under the simulator the draws
// are schedule choices, which the shrinker lowers toward 0):
//   request timeout     a network call (poll, commit, committed, admin, flush) waits out its
//                       timeout on the clock, then fails with kDeadlineExceeded;
//   disconnect          a network call fails at once with kUnavailable;
//   slow fetch          a poll costs extra virtual latency (up to slow_fetch_latency_ns_max);
//   partial fetch       a poll returns fewer records than are available and allowed;
//   empty poll          a poll returns nothing although records are available;
//   leader unavailable  one partition a call touches has no leader for up to
//                       leader_unavailable_ns_max: polls skip it, and offset lookups and
//                       flushes that touch it fail with kUnavailable "leader not available";
//   producer fenced     a producer is fenced for good: every later Send/Flush is kAborted. A
//                       transactional producer is fenced at a flush or a commit as a newer
//                       producer of its transactional.id would fence it: the epoch goes up and
//                       its open transaction is aborted (abort markers written);
//   transaction timeout at a commit, the broker finds the transaction past its timeout: it
//                       aborts it, bumps the epoch, and the commit fails kAborted (fenced);
//   coordinator moved   a transactional call (init, send offsets, commit, abort) fails with
//                       kUnavailable (Kafka's NOT_COORDINATOR) before the coordinator acts;
//   streams heartbeat error
//                       a streams-group heartbeat is answered, before the coordinator acts, with
//                       COORDINATOR_LOAD_IN_PROGRESS (answer 0), NOT_COORDINATOR or
//                       COORDINATOR_NOT_AVAILABLE: the member retries after its backoff or at once;
//   streams heartbeat delay
//                       a streams-group heartbeat reaches the coordinator late, by up to
//                       streams_heartbeat_delay_ns_max (a long one lets the session time out: the
//                       member is fenced and rejoins);
//   metadata unavailable
//                       a restore consumer's Assign fails with kUnavailable before the
//                       assignment changes, as the rdkafka adapter's does when the metadata
//                       request it makes to check the partitions fails (Seek, Pause and Resume
//                       are local calls in every client: they are not failed).
// The two transaction faults, the two streams faults and metadata unavailable are never drawn by
// Swarm (whose draws stay
// as they were): a test or scenario sets their rates, or takes SwarmWithTransactions.
// Not random: out of range after truncation. It comes from DeleteRecords moving a log start past
// a consumer's position, which scenarios drive explicitly. Nor are the transaction time-outs of
// the virtual clock (fake_broker.h) or FakeBroker::FenceTransactionalId.
//
// Kept recoverable (the properties may rely on these):
//   - a failed call fails before the broker acts: no half-applied commit, append or delete, so
//     retrying the same call is always safe;
//   - acknowledged records (a successful Flush) and committed offsets are never lost;
//   - a poll never skips an offset: positions advance only past records it returned;
//   - timeouts, slow fetches and leaderless periods are bounded, so a retrying client makes
//     progress; only fencing is permanent, and only for the fenced producer (a new producer of
//     the same transactional.id goes on);
//   - a transaction is committed whole or not at all: an injected fault never commits part of
//     it, and records of an aborted transaction are never returned under read_committed.
//
// Every injected error status is tagged with TagInjected and says "injected"; every injected
// fault is a TraceMark("fault", <name>, arg), so it shows in traces and timelines.
//
// Thread-safety: BrokerFaults is a value. FaultInjector is not thread-safe: the broker calls it
// under its mutex (which also serialises the draws from the RandomSource).
#ifndef RESTORESIM_FAKES_BROKER_FAULTS_H_
#define RESTORESIM_FAKES_BROKER_FAULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/port/random.h"
#include "core/sync/clock.h"

namespace restoresim::fakes {

// Rates are per mille (0 = never, 1000 = always).
struct BrokerFaults {
  uint32_t request_timeout_per_mille = 0;
  uint32_t disconnect_per_mille = 0;
  uint32_t slow_fetch_per_mille = 0;
  TimeNs slow_fetch_latency_ns_max = 500 * kMillisecond;
  uint32_t partial_fetch_per_mille = 0;
  uint32_t empty_poll_per_mille = 0;
  uint32_t leader_unavailable_per_mille = 0;
  TimeNs leader_unavailable_ns_max = 2 * kSecond;
  uint32_t producer_fenced_per_mille = 0;
  uint32_t transaction_timeout_per_mille = 0;
  uint32_t coordinator_moved_per_mille = 0;
  uint32_t metadata_unavailable_per_mille = 0;
  uint32_t streams_heartbeat_error_per_mille = 0;
  uint32_t streams_heartbeat_delay_per_mille = 0;
  TimeNs streams_heartbeat_delay_ns_max = 2 * kSecond;

  // Swarm testing (Groce et al., ISSTA 2012): each fault is on with probability 1/2, at a rate
  // drawn up to its cap; at least one is on. Producer fencing, the one fatal fault, is drawn
  // only with include_fatal: a run without it must see no non-retryable error.
  static BrokerFaults Swarm(RandomSource& random, bool include_fatal = false);
  // Swarm's profile, then the transaction faults each on with probability 1/2 (the moved
  // coordinator up to 200 per mille; the time-out, fatal, up to 5 with include_fatal only).
  static BrokerFaults SwarmWithTransactions(RandomSource& random, bool include_fatal = false);
  // A fixed profile where every retryable fault happens now and then.
  static BrokerFaults Moderate();

  bool any() const;
  // "request_timeout=12 disconnect=0 ..." for printing a run's derived options.
  std::string ToString() const;
};

// How many faults of each kind were injected (for tests that must see faults happen).
struct FaultCounts {
  uint64_t request_timeout = 0;
  uint64_t disconnect = 0;
  uint64_t slow_fetch = 0;
  uint64_t partial_fetch = 0;
  uint64_t empty_poll = 0;
  uint64_t leader_unavailable = 0;
  uint64_t producer_fenced = 0;
  uint64_t transaction_timeout = 0;
  uint64_t coordinator_moved = 0;
  uint64_t metadata_unavailable = 0;
  uint64_t streams_heartbeat_error = 0;
  uint64_t streams_heartbeat_delay = 0;
  uint64_t Total() const;
};

// An injected error: code, "injected <what>", tagged with TagInjected.
absl::Status InjectedError(absl::StatusCode code, std::string_view what);

class FaultInjector {
 public:
  // `random` may be null: no faults, and nothing is ever drawn.
  FaultInjector(RandomSource* random, const BrokerFaults& faults);

  // The request-level faults of one network call named `call`.
  struct RequestFault {
    absl::Status status;          // OK, or the injected error to return
    bool wait_timeout = false;    // kDeadlineExceeded: wait out the call's timeout first
    TimeNs extra_latency_ns = 0;  // slow fetch
  };
  RequestFault OnRequest(std::string_view call, bool is_fetch);

  // Whether a poll that could return `available_records` returns nothing.
  bool EmptyPoll(int64_t available_records);
  // The record budget of a poll that may take `budget` records: `budget`, or fewer.
  int64_t PartialFetchBudget(int64_t budget);
  // Whether one of `partition_count` partitions a call touches loses its leader: which one
  // and for how long.
  struct LeaderLoss {
    size_t index = 0;
    TimeNs duration_ns = 0;
  };
  std::optional<LeaderLoss> LoseLeader(size_t partition_count);
  // Whether a producer gets fenced now.
  bool FenceProducer();
  // Whether a committing transaction is found timed out now.
  bool TimeOutTransaction();
  // Whether a transactional call finds its coordinator moved.
  bool MoveCoordinator();
  // Whether a restore consumer's Assign finds the metadata unavailable.
  bool LoseMetadata();
  // The error code a streams-group heartbeat is answered with instead (0: none).
  int16_t StreamsHeartbeatError();
  // How late a streams-group heartbeat reaches its coordinator (0: on time).
  TimeNs StreamsHeartbeatDelay();

  // Replaces the rates from now on (counts are kept). REQUIRES: each rate <= 1000.
  void SetFaults(const BrokerFaults& faults);
  const BrokerFaults& faults() const { return faults_; }
  const FaultCounts& counts() const { return counts_; }

 private:
  bool Hit(uint32_t per_mille);

  RandomSource* random_;
  BrokerFaults faults_;
  FaultCounts counts_;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_BROKER_FAULTS_H_
