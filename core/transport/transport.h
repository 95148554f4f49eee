// The transport port: everything the restore-thread runtime says to Kafka, named as a Kafka
// user would expect. Implementations: the in-memory fake broker (fakes/fake_broker.h), used
// under the simulator, and librdkafka against a real broker (core/transport/rdkafka/).
//
// Errors are values. The status code says what the caller may do (this is the port's one error
// table; each backend maps its own errors onto it in one place, e.g. rdkafka_errors.cc):
//   kDeadlineExceeded  request timed out                       retryable
//   kUnavailable       disconnected, leader not available,     retryable
//                      coordinator moving or loading, Kafka's
//                      CONCURRENT_TRANSACTIONS (a previous
//                      transaction of the id is still ending)
//   kOutOfRange        offset outside [log start, end]         not retryable: the runtime turns
//                                                              it into task corruption
//   kNotFound          unknown topic or partition              fatal
//   kAlreadyExists     CreateTopic of an existing topic        fatal (a retried create that
//                                                              finds it may count it done)
//   kAborted           producer fenced: PRODUCER_FENCED,       fatal for that producer: close
//                      INVALID_PRODUCER_EPOCH, a transaction   it; a new producer (a new
//                      the coordinator timed out (it bumps     InitTransactions) may go on.
//                      the epoch), any fatal producer error    Kafka Streams: TaskMigrated
//   kCancelled         transaction abortable: the open         AbortTransaction, then begin a
//                      transaction cannot commit (a send or    new one; the producer stays
//                      offset commit in it failed for good,    usable (Kafka's abortable
//                      TRANSACTION_ABORTABLE)                  errors, KIP-691/KIP-890)
//   kFailedPrecondition misuse: poll/seek of an unassigned partition, use after close, a
//                      transactional call in the wrong state (Kafka's IllegalStateException),
//                      offsets sent to a transaction by a member not in the generation
//                      (Kafka's CommitFailedException / ILLEGAL_GENERATION)
//   kInvalidArgument   bad argument (negative offset, empty topic list)
// Errors injected by a fault injector carry kInjectedFaultPayload (core/port/file_system.h).
//
// Thread-safety: one client object is used by one thread at a time (as Kafka's consumers
// are); different clients may be used concurrently.
#ifndef RESTORESIM_CORE_TRANSPORT_TRANSPORT_H_
#define RESTORESIM_CORE_TRANSPORT_TRANSPORT_H_

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/topic.h"

namespace restoresim {

struct TopicPartition {
  Topic topic;
  int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
  std::string ToString() const;  // "topic-3", as Kafka prints it
};

// One record as a client sees it. A missing value is a tombstone (a delete in a changelog).
struct ConsumerRecord {
  int64_t offset = 0;
  std::string key;
  std::optional<std::string> value;
  int64_t timestamp_ms = 0;
};

struct PartitionRecords {
  TopicPartition partition;
  // Ascending offsets; consecutive unless the partition holds transactions (control records
  // and, under read_committed, aborted records leave gaps).
  std::vector<ConsumerRecord> records;
};

struct PollResult {
  std::vector<PartitionRecords> partitions;  // ordered by partition
  // Partitions whose position fell outside [log start offset, end offset] (e.g. after
  // retention or truncation moved the log start past a checkpoint). They return no records
  // until sought again. Kafka with auto.offset.reset=none reports exactly these.
  std::vector<TopicPartition> out_of_range;

  size_t RecordCount() const;
};

enum class OffsetReset { kNone, kEarliest, kLatest };

// Kafka's isolation.level. read_uncommitted (Kafka's default) sees every data record, aborted
// ones included, up to the high watermark; read_committed sees committed data only, up to the
// last stable offset (LSO: the first offset of the earliest open transaction, else the high
// watermark). Neither ever returns a control record (a commit or abort marker), but markers
// take offsets: offsets in a poll may jump, and a position moves past the markers and skipped
// aborted records it read over.
enum class IsolationLevel { kReadUncommitted, kReadCommitted };

class GroupAssignor;

// Kafka's group.protocol for a main consumer. kClassic: the consumer-group protocol (JoinGroup,
// SyncGroup; the leader's assignor, if any, places partitions). kStreams: a member of a streams
// group (KIP-1071): the broker's group coordinator places active, standby and warm-up tasks, and
// the member takes its partitions by manual assignment.
enum class GroupProtocol { kClassic, kStreams };

struct ConsumerConfig {
  std::string client_id;
  int32_t max_poll_records = 1000;           // max.poll.records
  OffsetReset auto_offset_reset = OffsetReset::kNone;  // for a partition without a position
  // isolation.level: what polls return, and where SeekToEnd and a kLatest reset go (the LSO
  // under read_committed, the high watermark otherwise).
  IsolationLevel isolation_level = IsolationLevel::kReadUncommitted;
  // Main consumer only: the assignor this member offers its group (Kafka's
  // partition.assignment.strategy; Kafka Streams always offers its StreamsPartitionAssignor).
  // Null: the group's default. Not owned; must outlive the consumer. See GroupAssignor.
  GroupAssignor* assignor = nullptr;
  // Main consumer only: the group protocol, and under kStreams what the member tells the group
  // about itself: its process id (Kafka Streams': one per instance, shared by its threads) and
  // the topology's changelog topics. The topology is one subtopology ("0") reading the
  // subscribed topics, its tasks named by partition (task 0_p reads partition p).
  GroupProtocol group_protocol = GroupProtocol::kClassic;
  std::string process_id;
  std::vector<std::string> changelog_topics;
};

// A consumer without group membership: Kafka Streams' restore consumer.
class RestoreConsumer {
 public:
  virtual ~RestoreConsumer() = default;

  // Replaces the assignment (Kafka's assign()). Positions of partitions that stay are kept;
  // removed partitions lose their position and pause state.
  virtual absl::Status Assign(const std::vector<TopicPartition>& partitions) = 0;
  virtual absl::Status Unassign() = 0;
  virtual std::vector<TopicPartition> Assignment() const = 0;
  // REQUIRES: partition assigned. offset may be anything >= 0; an offset outside the log is
  // reported as out of range by the next Poll.
  virtual absl::Status Seek(const TopicPartition& partition, int64_t offset) = 0;
  // Resolved lazily, at the next Position or Poll (as Kafka does).
  virtual absl::Status SeekToBeginning(const std::vector<TopicPartition>& partitions) = 0;
  virtual absl::Status SeekToEnd(const std::vector<TopicPartition>& partitions) = 0;
  virtual absl::StatusOr<int64_t> Position(const TopicPartition& partition) = 0;
  virtual absl::Status Pause(const std::vector<TopicPartition>& partitions) = 0;
  virtual absl::Status Resume(const std::vector<TopicPartition>& partitions) = 0;
  virtual std::vector<TopicPartition> Paused() const = 0;
  // Fetches from the assigned, unpaused partitions at their positions (at most
  // max_poll_records in all) and advances the positions; waits up to timeout_ns for data.
  // Returns early with out-of-range partitions. With nothing to fetch (nothing assigned, or
  // all paused) it waits out the timeout and returns nothing: never an error, never a spin.
  virtual absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) = 0;
  virtual void Close() = 0;
};

// What a group member is told in a rebalance. `partitions` is the member's whole assignment in
// the new generation (not only what it gained: a Kafka adapter with a cooperative assignor
// reports the full set, as Kafka Streams' onAssignment sees it). user_data carries the group
// leader's assignment info (Kafka Streams: active and standby tasks); empty when the backend
// has none.
struct Assignment {
  std::vector<TopicPartition> partitions;
  std::string user_data;
  // Under GroupProtocol::kStreams: the standby and warm-up tasks the broker placed here, named
  // by the source partition they read (task 0_p: partition p); user_data is then empty.
  std::vector<TopicPartition> standby_partitions;
};

// One member's subscription as the group leader's assignor sees it (Kafka's
// ConsumerPartitionAssignor.Subscription).
struct GroupMemberSubscription {
  std::vector<std::string> topics;    // sorted
  std::string user_data;              // what the member last set (SetSubscriptionUserData)
  std::vector<TopicPartition> owned;  // its partitions as of the latest generation, sorted
};

// What an assignor may read about the cluster while it assigns: Kafka's assignor gets the
// cluster metadata and, in Kafka Streams, reads changelog end offsets with its admin client.
class GroupAssignorContext {
 public:
  virtual ~GroupAssignorContext() = default;
  virtual int32_t PartitionCount(const std::string& topic) const = 0;  // 0: unknown topic
  // The end offset of a partition; nullopt for an unknown one.
  virtual std::optional<int64_t> EndOffset(const TopicPartition& partition) const = 0;
};

// A group assignor (Kafka's ConsumerPartitionAssignor). The group runs the assignor of its
// leader (the member that joined first) at every rebalance, over every member's subscription,
// once every member offers an assignor of the same Name(); until then the group assigns with
// its default. Assign returns an assignment per member id (members left out get nothing);
// every partition at most once. An error keeps the group on its default assignment for that
// generation. Thread-safety: Assign may be called on any thread (whichever caused the
// rebalance), never concurrently for one group; it must not call the transport.
class GroupAssignor {
 public:
  virtual ~GroupAssignor() = default;
  virtual std::string Name() const = 0;
  virtual absl::StatusOr<std::map<std::string, Assignment>> Assign(
      const std::string& leader_member_id,
      const std::map<std::string, GroupMemberSubscription>& members,
      const GroupAssignorContext& cluster) = 0;
};

// Rebalance callbacks, called on the thread that calls MainConsumer::Poll, inside Poll, in the
// order the rebalances happened: for each, revoked (or lost) first, then assigned.
// OnPartitionsRevoked is called only when something is revoked, and the revoked partitions are
// still owned during it (it may commit them); OnPartitionsAssigned is called for every
// generation the member takes part in, even with an empty assignment. A callback may call the
// consumer (commit, seek, position, even Close) but not Poll it.
class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  virtual void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) = 0;
  virtual void OnPartitionsAssigned(const Assignment& assignment) = 0;
  // The member lost its partitions without a chance to commit (session timeout, fencing).
  virtual void OnPartitionsLost(const std::vector<TopicPartition>& partitions) = 0;
};

// What a transactional producer sends with the offsets of a transaction, so that the group
// coordinator can refuse a member that is no longer in the generation (Kafka's
// ConsumerGroupMetadata, KIP-447).
struct ConsumerGroupMetadata {
  std::string group_id;
  int32_t generation_id = -1;  // -1: unknown (no check of the generation)
  std::string member_id;       // empty: unknown (no check of the membership)
  // Backend-private bytes that carry what the fields cannot (librdkafka exposes its metadata
  // only serialized, the generation included); pass them back unchanged. Empty for the fake.
  std::string opaque;
};

// A group member: Kafka Streams' main consumer (input topics, group membership, commits).
class MainConsumer {
 public:
  virtual ~MainConsumer() = default;

  virtual absl::Status Subscribe(const std::vector<std::string>& topics,
                                 RebalanceListener* listener) = 0;
  // Delivers pending rebalance callbacks, then records of the owned, unpaused partitions.
  virtual absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) = 0;
  virtual std::vector<TopicPartition> Assignment() const = 0;
  virtual absl::Status Seek(const TopicPartition& partition, int64_t offset) = 0;
  virtual absl::StatusOr<int64_t> Position(const TopicPartition& partition) = 0;
  virtual absl::Status Pause(const std::vector<TopicPartition>& partitions) = 0;
  virtual absl::Status Resume(const std::vector<TopicPartition>& partitions) = 0;
  // Commits offsets (the next offset to consume) of owned partitions for the group. A partition
  // the member does not own, or a member that was lost, fails kFailedPrecondition (Kafka's
  // CommitFailedException).
  virtual absl::Status CommitSync(const std::map<TopicPartition, int64_t>& offsets) = 0;
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& partitions) = 0;
  virtual std::string MemberId() const = 0;
  // The user data of this member's subscription (Kafka: the assignor's subscriptionUserData),
  // which the leader's assignor reads at every rebalance from now on. Set it on the
  // consumer's own thread, before Subscribe and before each poll: the group sees what the
  // member last set. kUnimplemented where the backend runs no custom assignor.
  virtual absl::Status SetSubscriptionUserData(std::string user_data) = 0;
  // Asks the group for a new rebalance (Kafka's enforceRebalance): a probing rebalance.
  // kUnimplemented where the backend cannot.
  virtual absl::Status EnforceRebalance() = 0;
  // The member's group, generation and member id as of the last rebalance it took part in
  // (Kafka's groupMetadata()), for TransactionalProducer::SendOffsetsToTransaction.
  virtual ConsumerGroupMetadata GroupMetadata() const = 0;
  virtual void Close() = 0;
};

// Cluster metadata and offsets. The restore thread uses this, never the main consumer.
class Admin {
 public:
  virtual ~Admin() = default;

  virtual absl::Status CreateTopic(const std::string& topic, int32_t partitions) = 0;
  virtual absl::StatusOr<int32_t> PartitionCount(const std::string& topic) = 0;
  // The end offset (high watermark, read-uncommitted) of each partition: markers and aborted
  // records count. Equal to EndOffsetsFor(partitions, kReadUncommitted).
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsets(
      const std::vector<TopicPartition>& partitions) = 0;
  // The end offset of each partition for an isolation level (Kafka's listOffsets(latest) with
  // ListOffsetsOptions(isolationLevel)): the high watermark, or the last stable offset.
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsetsFor(
      const std::vector<TopicPartition>& partitions, IsolationLevel isolation_level) = 0;
  // The log start offset of each partition.
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> BeginningOffsets(
      const std::vector<TopicPartition>& partitions) = 0;
  // A group's committed offsets; partitions without one are absent.
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> CommittedOffsets(
      const std::string& group, const std::vector<TopicPartition>& partitions) = 0;
  // Moves each partition's log start offset up to `offset` (Kafka's deleteRecords): the way
  // retention makes old offsets fall out of range.
  virtual absl::Status DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets) = 0;
};

// Appends records; used for changelog writes and, in scenarios, for input data.
class Producer {
 public:
  virtual ~Producer() = default;

  // Queues a record (value nullopt: a tombstone). Fails fast when fenced or closed.
  virtual absl::Status Send(const TopicPartition& partition, std::string key,
                            std::optional<std::string> value, int64_t timestamp_ms) = 0;
  // Waits until every queued record is acknowledged; returns, per partition written since the
  // last Flush, the offset of the last acknowledged record.
  virtual absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) = 0;
  virtual void Close() = 0;
};

struct TransactionalProducerConfig {
  std::string client_id;
  std::string transactional_id;  // transactional.id: required, the identity fencing is by
  // transaction.timeout.ms: a transaction open longer is aborted by the broker (Kafka's
  // default 60 s; Kafka Streams sets 10 s under exactly_once_v2).
  TimeNs transaction_timeout_ns = 60 * kSecond;
};

// A transactional producer (Kafka's KafkaProducer with transactional.id): records and consumer
// offsets committed or aborted atomically. Send and Flush behave as Producer's, but Send
// requires an open transaction, and records sent in one are visible to read_committed
// consumers only once it commits.
//
// States (Kafka's TransactionManager): uninitialised --InitTransactions--> ready
// --BeginTransaction--> in transaction --Commit/AbortTransaction--> ready. A call in the wrong
// state is kFailedPrecondition. After kCancelled (abortable) only AbortTransaction is allowed;
// after kAborted (fenced, timed out) nothing is: Close it and make a new producer.
class TransactionalProducer : public Producer {
 public:
  // Registers the transactional id with its coordinator and gets a producer id and a new
  // epoch (Kafka's initTransactions): aborts a transaction the id left open and fences every
  // older producer of the id (their next call fails kAborted).
  virtual absl::Status InitTransactions(TimeNs timeout_ns) = 0;
  virtual absl::Status BeginTransaction() = 0;
  // Adds consumer offsets (the next offset to consume) to the transaction: the group sees them
  // only when it commits (Kafka's sendOffsetsToTransaction).
  virtual absl::Status SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& offsets,
                                                const ConsumerGroupMetadata& group) = 0;
  // Flushes, then commits: the records become visible to read_committed and the offsets to
  // the group, and a commit marker is written to every partition the transaction wrote to.
  // A retryable error may be retried with another CommitTransaction.
  virtual absl::Status CommitTransaction(TimeNs timeout_ns) = 0;
  // Drops what is queued and aborts: abort markers are written, the records stay in the log
  // (read_uncommitted sees them) but read_committed never returns them.
  virtual absl::Status AbortTransaction(TimeNs timeout_ns) = 0;
};

// Creates clients. One Transport serves a whole runtime instance.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) = 0;
  virtual std::unique_ptr<MainConsumer> NewMainConsumer(const std::string& group,
                                                        const ConsumerConfig& config) = 0;
  virtual std::unique_ptr<Admin> NewAdmin(const std::string& client_id) = 0;
  virtual std::unique_ptr<Producer> NewProducer(const std::string& client_id) = 0;
  virtual std::unique_ptr<TransactionalProducer> NewTransactionalProducer(
      const TransactionalProducerConfig& config) = 0;
};

// Whether a caller may retry the same call.
bool IsRetryable(const absl::Status& status);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_TRANSPORT_H_
