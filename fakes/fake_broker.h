// FakeBroker: an in-memory Kafka cluster behind the transport port, for the simulator (virtual
// clock, fibers) and for real-thread tests (system clock, OS threads) alike.
//
// It holds topics of partitions (each a PartitionLog), a group coordinator per group id
// (membership, generations, committed offsets; see fake_group.h for the default assignor and
// the scenario controls), and creates clients (fake_clients.h) that implement the port's
// semantics as transport.h states them. Every client call is a scheduling point (a
// SimOp::kTransport point plus TraceMark("transport", <call>)); every network call (polls,
// commits, committed-offset reads, admin calls, flushes) also costs BrokerOptions latency on
// the clock and is where the faults of broker_faults.h are injected. Polls wait on the clock
// (a CondVar notified by appends, deletions and rebalances) up to their timeout.
//
// Streams groups (KIP-1071): a StreamsGroupCoordinator per group id (fake_streams_group.h) takes
// the StreamsGroupHeartbeat structs of FakeStreamsGroupConsumer (a main consumer with
// GroupProtocol::kStreams) under the broker's settings (BrokerOptions::streams_group); its
// commits are checked against the member's epoch and land in the same committed offsets as a
// classic group's (Kafka's __consumer_offsets, per group id).
//
// Transactions (Kafka's TransactionCoordinator and ProducerStateManager, paraphrased; the
// model in full, with what the fake leaves out, is in fake_transactional_producer.h): each
// transactional.id has a producer id and an epoch; InitTransactions bumps the epoch, aborts
// the id's open transaction and fences every older producer of the id. A transaction starts
// on the broker with its first flushed record or offsets; its records go to the partition
// logs at once (PartitionLog's transactions: the LSO holds read_committed consumers before
// them); commit or abort writes a marker to every partition it wrote to, and a commit makes
// its group offsets visible (they are invisible before). A transaction open longer than its
// transaction.timeout.ms on the clock is aborted by the broker, which bumps the epoch (the
// producer is fenced); the check is lazy, made by every call that reads a partition's LSO or
// acts on a transaction, so it needs no thread of its own. Markers, aborts and fencing are
// TraceMark("transaction", ...) points, so they show in traces and timelines.
//
// The scenario controls below (CreateTopic, Append, DeleteRecords, Rebalance, ...) act
// directly: no latency, no faults. Results never depend on addresses or hash order (only
// std::map and sorted vectors), so a run is a pure function of its schedule.
//
// Thread-safety: thread-safe (one restoresim::Mutex guards all state). Clients follow the
// port's rule: one thread at a time per client. The broker must outlive its clients.
#ifndef RESTORESIM_FAKES_FAKE_BROKER_H_
#define RESTORESIM_FAKES_FAKE_BROKER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/port/random.h"
#include "core/sync/clock.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/transport/transport.h"
#include "core/util/sim_hooks.h"
#include "fakes/broker_faults.h"
#include "fakes/fake_group.h"
#include "fakes/fake_log.h"
#include "fakes/fake_streams_group.h"

namespace restoresim::fakes {

struct BrokerOptions {
  TimeNs request_latency_ns = 0;             // virtual cost of every network call
  TimeNs request_timeout_ns = 30 * kSecond;  // what a timed-out request waits (not polls)
  StreamsGroupSettings streams_group;        // every streams group's (Kafka's defaults)
};

class FakeBroker final : public Transport {
 public:
  // Kafka allows 249 characters of [a-zA-Z0-9._-] in a topic name.
  static constexpr size_t kTopicNameBytesMax = 249;
  static constexpr int32_t kTopicPartitionsMax = 10000;

  // `faults_random` may be null (no faults). Under the simulator pass a sim::ChoiceRandom, so
  // that faults are schedule choices and replay with it.
  FakeBroker(Clock& clock, RandomSource* faults_random, const BrokerFaults& faults,
             const BrokerOptions& options = {});
  ~FakeBroker() override;
  FakeBroker(const FakeBroker&) = delete;
  FakeBroker& operator=(const FakeBroker&) = delete;

  // ---- scenario controls: direct, no latency, no faults ----
  absl::Status CreateTopic(const std::string& topic, int32_t partitions);
  absl::StatusOr<int32_t> PartitionCount(const std::string& topic);
  absl::StatusOr<int64_t> Append(const TopicPartition& partition, std::string_view key,
                                 std::optional<std::string_view> value, int64_t timestamp_ms);
  // All or nothing: every entry is validated before any log changes.
  absl::Status DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets);
  absl::StatusOr<int64_t> EndOffset(const TopicPartition& partition);
  // The last stable offset: what read_committed consumers read up to (after the lazy
  // transaction time-out check).
  absl::StatusOr<int64_t> LastStableOffset(const TopicPartition& partition);
  // A transactional.id as the coordinator sees it; nullopt for an id never initialised.
  struct TransactionInfo {
    int64_t producer_id = -1;
    int32_t epoch = -1;
    bool ongoing = false;                     // a transaction is open on the broker
    std::vector<TopicPartition> partitions;   // written by the open transaction, sorted
    int64_t aborted_by_timeout = 0;           // transactions the broker timed out, ever
  };
  std::optional<TransactionInfo> Transaction(const std::string& transactional_id);
  // Fences the current producer of `transactional_id` as a new InitTransactions of the id
  // would (the epoch goes up, an open transaction is aborted): a zombie's successor, scripted.
  absl::Status FenceTransactionalId(const std::string& transactional_id);
  absl::StatusOr<int64_t> LogStartOffset(const TopicPartition& partition);
  absl::StatusOr<std::vector<ConsumerRecord>> ReadLog(const TopicPartition& partition,
                                                      int64_t from_offset, size_t max_records);
  // For observers (the invariant oracle): the whole log of `partition` from its start, read
  // without taking the broker's lock, so observing adds no scheduling point and does not
  // change the schedule. REQUIRES: under the simulator (one simulated thread runs at a time;
  // the broker's state is consistent at every scheduling point). Empty for an unknown
  // partition. Control records are left out; kReadCommitted also leaves out aborted records
  // and stops at the LSO (as of the last time-out check: Peek changes nothing).
  std::vector<ConsumerRecord> PeekLog(
      const TopicPartition& partition,
      IsolationLevel isolation_level = IsolationLevel::kReadUncommitted) const
      ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // The last stable offset, read the same way (0 for an unknown partition).
  int64_t PeekLastStableOffset(const TopicPartition& partition) const
      ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // The log start offset, read the same way (0 for an unknown partition).
  int64_t PeekLogStartOffset(const TopicPartition& partition) const
      ABSL_NO_THREAD_SAFETY_ANALYSIS;
  void SetManualAssignment(const std::string& group, bool manual);
  // Takes the leader of `partition` away until `until_ns` on the clock (kLeaderNeverBack: for
  // good): polls skip it, offset lookups and flushes that touch it fail with kUnavailable
  // "leader not available" (injected), whatever the fault rates — a scripted fault, not drawn.
  static constexpr TimeNs kLeaderNeverBack = std::numeric_limits<TimeNs>::max();
  void TakeLeaderAway(const TopicPartition& partition, TimeNs until_ns);
  // Takes the group coordinator of `group` away until `until_ns` (kLeaderNeverBack: for
  // good): committed-offset reads of the group fail with kUnavailable "coordinator not
  // available" (injected, Kafka's retriable COORDINATOR_NOT_AVAILABLE) — a scripted fault.
  void TakeCoordinatorAway(const std::string& group, TimeNs until_ns);
  // Installs one generation: each listed member gets its assignment (with user_data); every
  // other member of the group an empty one.
  absl::Status Rebalance(const std::string& group,
                         const std::map<std::string, Assignment>& assignments);
  absl::Status LoseMember(const std::string& group, const std::string& member_id);
  std::vector<std::string> Members(const std::string& group);  // active members, join order
  int32_t Generation(const std::string& group);                // 0: no generation yet
  // For the scenarios' convergence checks, read like PeekLog (no lock, no scheduling point;
  // REQUIRES: under the simulator): whether every member of `group` has taken and acknowledged
  // every rebalance (GroupCoordinator::Settled). True for an unknown group.
  bool PeekGroupSettled(const std::string& group) const ABSL_NO_THREAD_SAFETY_ANALYSIS;
  std::map<TopicPartition, int64_t> CommittedOffsets(const std::string& group);
  // The streams-group settings of the groups made from now on (BrokerOptions::streams_group
  // before). REQUIRES: no client exists yet (read without the lock).
  void SetStreamsGroupSettings(const StreamsGroupSettings& settings) {
    streams_settings_ = settings;
  }
  // A streams group as its coordinator sees it (sessions that expired are removed first); an
  // unknown group has no members.
  std::vector<std::string> StreamsMembers(const std::string& group);
  std::optional<StreamsGroupCoordinator::MemberView> StreamsMember(const std::string& group,
                                                                   const std::string& member_id);
  int32_t StreamsGroupEpoch(const std::string& group);
  // Removes a streams member as its session timing out would (a scripted fault): its next
  // heartbeat is answered UNKNOWN_MEMBER_ID, so it loses its tasks and rejoins. kNotFound for
  // a member the group does not have.
  absl::Status ExpireStreamsMember(const std::string& group, const std::string& member_id);
  FaultCounts faults_injected();
  BrokerFaults faults() const;
  // Replaces the fault rates from now on: a scenario's swarm profile, or none to heal the
  // faults for a liveness phase (leaderless periods already drawn then end at once). Faults
  // can be turned on only if the broker was given a `faults_random`.
  void SetFaults(const BrokerFaults& faults);
  // Called with every record appended, under the broker's lock (it must not call the broker):
  // the oracle keeps each changelog's whole history this way, records that retention or
  // DeleteRecords removed since included. Set before any client runs.
  void SetAppendObserver(
      std::function<void(const TopicPartition&, const ConsumerRecord&)> observer) {
    MutexLock lock(mu_);
    append_observer_ = std::move(observer);
  }
  // Called with the offsets [first, end) of `partition` whose records an abort marker took
  // back, under the broker's lock (it must not call the broker): with the append observer, the
  // oracle's account of what each changelog committed. REQUIRES: no client exists yet. Set
  // without the lock, so that it adds no scheduling point (a world that sets it schedules as
  // one that does not).
  void SetAbortObserver(
      std::function<void(const TopicPartition&, int64_t first, int64_t end)> observer)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    abort_observer_ = std::move(observer);
  }
  // ReadLog as a read_committed consumer sees the log: the data records in [from_offset,
  // min(limit_offset, last stable offset)), aborted ones left out.
  absl::StatusOr<std::vector<ConsumerRecord>> ReadCommittedLog(const TopicPartition& partition,
                                                               int64_t from_offset,
                                                               int64_t limit_offset);
  size_t MemoryBytes();

  // ---- Transport ----
  std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) override;
  std::unique_ptr<MainConsumer> NewMainConsumer(const std::string& group,
                                                const ConsumerConfig& config) override;
  std::unique_ptr<Admin> NewAdmin(const std::string& client_id) override;
  std::unique_ptr<Producer> NewProducer(const std::string& client_id) override;
  std::unique_ptr<TransactionalProducer> NewTransactionalProducer(
      const TransactionalProducerConfig& config) override;

 private:
  friend class Fetcher;
  friend class FakeRestoreConsumer;
  friend class FakeMainConsumer;
  friend class FakeStreamsGroupConsumer;
  friend class FakeAdmin;
  friend class FakeProducer;
  friend class FakeTransactionalProducer;

  // One transactional.id at the coordinator.
  struct TransactionState {
    int64_t producer_id = -1;
    int32_t epoch = -1;
    TimeNs timeout_ns = 0;
    bool ongoing = false;
    TimeNs started_ns = 0;
    std::set<TopicPartition> partitions;  // with records in the open transaction
    std::map<std::string, std::map<TopicPartition, int64_t>> offsets;  // per group, pending
    std::string fenced_why;  // why the epoch last went up (for the fenced producer's error)
    int64_t aborted_by_timeout = 0;
  };
  // Kafka's transaction-state rules, in fake_broker_transactions.cc. All REQUIRE mu_.
  // InitProducerId: a new producer id, or the id's next epoch (aborting an open transaction).
  TransactionState& InitProducerIdLocked(const std::string& transactional_id, TimeNs timeout_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK if (producer id, epoch) is the id's current producer, else kAborted (fenced), after
  // timing out expired transactions.
  absl::Status CheckProducerLocked(const std::string& transactional_id, int64_t producer_id,
                                   int32_t epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Bumps the epoch of `state` (aborting its open transaction): fencing its producer.
  void BumpEpochLocked(const std::string& transactional_id, TransactionState& state,
                       std::string why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the transaction on the broker if it has not started yet.
  void StartTransactionLocked(TransactionState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> AppendTransactionalLocked(TransactionState& state,
                                                    const TopicPartition& partition,
                                                    std::string_view key,
                                                    std::optional<std::string_view> value,
                                                    int64_t timestamp_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the markers (and, on commit, the group offsets) and closes the transaction.
  void EndTransactionLocked(const std::string& transactional_id, TransactionState& state,
                            bool commit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Aborts (and fences) every transaction open longer than its timeout.
  void ExpireTransactionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- for the clients ----
  // Marks a client call as a transport scheduling point, and reports it (with the calling
  // client) to the runtime's observer: the oracle checks which thread calls which client.
  void TransportPoint(std::string_view client_id, std::string_view call);
  // One network round trip: latency plus request faults. Returns the injected error, if any.
  // A timed-out request waits `timeout_ns` before returning. REQUIRES: mu_ not held.
  absl::Status Request(std::string_view call, TimeNs timeout_ns, bool is_fetch)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A streams-group heartbeat: latency and request faults, then the streams faults (an error
  // answered before the coordinator acts, or a late arrival), then the coordinator. An error
  // status: no response (the request failed). REQUIRES: mu_ not held.
  absl::StatusOr<kafka_protocol::StreamsGroupHeartbeatResponse> StreamsHeartbeat(
      const std::string& group, const kafka_protocol::StreamsGroupHeartbeatRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A streams member's OffsetCommit, checked against its epoch: kFailedPrecondition for
  // UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH. REQUIRES: mu_ not held.
  absl::Status StreamsCommit(const std::string& group, const std::string& member_id,
                             int32_t member_epoch,
                             const std::map<TopicPartition, int64_t>& offsets)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A main consumer's committed-offset read (OffsetFetch): latency, faults, the coordinator.
  absl::StatusOr<std::map<TopicPartition, int64_t>> FetchCommitted(
      const std::string& group, const std::vector<TopicPartition>& partitions)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A fresh streams member id "<client_id>-streams-<n>" (Kafka's are UUIDs).
  std::string NewStreamsMemberId(const std::string& client_id) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Status CheckPartition(const TopicPartition& partition) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckTopics(const std::vector<std::string>& topics) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // REQUIRES: CheckPartition(partition) is OK.
  PartitionLog& Log(const TopicPartition& partition) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The partition's log, or null when the topic or the partition does not exist.
  PartitionLog* FindLog(const TopicPartition& partition) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Creates `topic` with `partitions` empty logs. REQUIRES: it does not exist.
  void AddTopicLocked(const std::string& topic, int32_t partitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int32_t PartitionCountLocked(const std::string& topic) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  GroupCoordinator& Group(const std::string& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  StreamsGroupCoordinator& StreamsGroup(const std::string& group)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool CoordinatorGoneLocked(const std::string& group) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> AppendLocked(const TopicPartition& partition, std::string_view key,
                                       std::optional<std::string_view> value, int64_t timestamp_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DeleteRecordsLocked(const std::map<TopicPartition, int64_t>& before_offsets)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Leader-unavailable faults: maybe takes away the leader of one of `partitions` (a call
  // touches them), then reports whether each has a leader now.
  void MaybeLoseLeader(const std::vector<TopicPartition>& partitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasLeader(const TopicPartition& partition) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // MaybeLoseLeader, then kUnavailable (injected) naming the first leaderless partition.
  absl::Status CheckLeaders(const std::vector<TopicPartition>& partitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const BrokerOptions options_;
  RandomSource* const faults_random_;
  mutable Mutex mu_{"fake_broker"};
  BrokerFaults faults_ ABSL_GUARDED_BY(mu_);
  // false: Request() skips the fault draw (and its lock). Written under mu_ (SetFaults), read
  // without it by Request().
  std::atomic<bool> faults_on_;
  // Notified (all) on appends, deletions, membership changes and rebalances: what a waiting
  // poll may be waiting for.
  CondVar changed_{"fake_broker.changed"};
  FaultInjector injector_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<PartitionLog>> topics_ ABSL_GUARDED_BY(mu_);
  // topics_' logs by the interned name's identity (Topic::id): lookups only, never iterated.
  // Topics are never deleted, so the pointers stay valid.
  absl::flat_hash_map<const void*, std::vector<PartitionLog>*> logs_by_topic_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, GroupCoordinator> groups_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, StreamsGroupCoordinator> streams_groups_ ABSL_GUARDED_BY(mu_);
  StreamsGroupSettings streams_settings_;  // set before any client exists
  int64_t next_streams_member_number_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, TransactionState> transactions_ ABSL_GUARDED_BY(mu_);
  int64_t next_producer_id_ ABSL_GUARDED_BY(mu_) = 1000;
  std::map<TopicPartition, TimeNs> leaderless_until_ ABSL_GUARDED_BY(mu_);
  // Scripted by TakeLeaderAway, checked whatever the fault rates.
  std::map<TopicPartition, TimeNs> scripted_leaderless_until_ ABSL_GUARDED_BY(mu_);
  // Scripted by TakeCoordinatorAway.
  std::map<std::string, TimeNs> coordinator_gone_until_ ABSL_GUARDED_BY(mu_);
  std::function<void(const TopicPartition&, int64_t, int64_t)> abort_observer_
      ABSL_GUARDED_BY(mu_);
  std::function<void(const TopicPartition&, const ConsumerRecord&)> append_observer_
      ABSL_GUARDED_BY(mu_);
  // The broker as a simulation object (for kTransport points); used only by the OS thread
  // running a simulation.
  SimObjectState sim_state_;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_BROKER_H_
