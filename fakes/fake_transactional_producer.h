// FakeTransactionalProducer: the transport port's TransactionalProducer over the fake broker
// (Kafka's KafkaProducer with a transactional.id and its TransactionManager, paraphrased).
//
// The transaction model (what the fake does, and where it is simpler than Kafka):
//   - InitTransactions gets a producer id and epoch from the broker's coordinator for the
//     transactional.id (fake_broker.h); a second init of the id, by this or another producer,
//     bumps the epoch, aborts the id's open transaction and fences older producers.
//   - BeginTransaction is local (as Kafka's); the transaction starts on the broker with its
//     first flushed record or its first offsets (Kafka's AddPartitionsToTxn/AddOffsetsToTxn),
//     and transaction.timeout.ms counts from there.
//   - Flush appends the queued records to the logs inside the transaction (visible to
//     read_uncommitted at once; to read_committed only after the commit marker).
//   - CommitTransaction flushes, then writes commit markers to every partition written and
//     makes the offsets visible to the group; AbortTransaction drops the queue and writes abort
//     markers. A transaction that wrote nothing writes no markers.
//   - Fenced (a newer epoch exists, or the broker timed the transaction out and bumped the
//     epoch): the call fails kAborted and the producer is fatal: every later call but Close
//     returns the same error. Kafka sends PRODUCER_FENCED / INVALID_PRODUCER_EPOCH.
//   - Abortable: offsets sent by a member that is not in the group's current generation fail
//     kFailedPrecondition (Kafka's CommitFailedException) and put the transaction in an
//     abortable state: Send, Flush, SendOffsets and Commit then fail kCancelled until
//     AbortTransaction.
//   - Faults (broker_faults.h): the request faults of every network call (init, flush,
//     offsets, commit, abort) and the drawn "coordinator moved" (kUnavailable) fail before the
//     broker acts, so a retry is safe; the drawn "producer fenced" fault, at a flush or a
//     commit, fences the transactional id as a newer producer of it would (its open
//     transaction aborted); the drawn "transaction timeout", at a commit, aborts the
//     transaction and fences the producer as the broker's time-out does.
//   - Close drops what is queued: records of a transaction that never commits. The broker
//     aborts the open transaction when it times out or the id is initialised again.
// Not modelled: the coordinator's own partition (__transaction_state) and its moves, markers
// in __consumer_offsets, KIP-890's per-transaction epoch bump, idempotent sequence numbers.
//
// Thread-safety: as the port says, one thread at a time per client object.
#ifndef RESTORESIM_FAKES_FAKE_TRANSACTIONAL_PRODUCER_H_
#define RESTORESIM_FAKES_FAKE_TRANSACTIONAL_PRODUCER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/transport/transport.h"
#include "fakes/fake_broker.h"

namespace restoresim::fakes {

class FakeTransactionalProducer final : public TransactionalProducer {
 public:
  // Records queued between flushes (as FakeProducer's).
  static constexpr size_t kQueuedRecordsMax = size_t{1} << 20;
  // Kafka's transaction.max.timeout.ms default (15 minutes): a longer timeout is refused.
  static constexpr TimeNs kTransactionTimeoutNsMax = 15 * 60 * kSecond;

  FakeTransactionalProducer(FakeBroker& broker, const TransactionalProducerConfig& config);
  ~FakeTransactionalProducer() override;

  absl::Status Send(const TopicPartition& partition, std::string key,
                    std::optional<std::string> value, int64_t timestamp_ms) override;
  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override;
  void Close() override;
  absl::Status InitTransactions(TimeNs timeout_ns) override;
  absl::Status BeginTransaction() override;
  absl::Status SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& offsets,
                                        const ConsumerGroupMetadata& group) override;
  absl::Status CommitTransaction(TimeNs timeout_ns) override;
  absl::Status AbortTransaction(TimeNs timeout_ns) override;

 private:
  // Kafka's TransactionManager states, reduced to what the port exposes.
  enum class State { kUninitialized, kReady, kInTransaction, kAbortable, kFatal };
  struct Queued {
    TopicPartition partition;
    std::string key;
    std::optional<std::string> value;
    int64_t timestamp_ms = 0;
  };

  // The transport point of `call`; kFailedPrecondition after Close, the fatal error once
  // fenced, the abortable error in the abortable state (unless `allow_abortable`).
  absl::Status Enter(std::string_view call, bool allow_abortable = false) const;
  absl::Status WrongState(std::string_view call) const;
  // The broker's check of this producer's epoch; a fence makes the producer fatal.
  absl::Status CheckNotFenced() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // The drawn "producer fenced" fault: fences the id and makes the producer fatal.
  absl::Status MaybeInjectFence(std::string_view call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // The drawn "coordinator moved" fault: kUnavailable, before the coordinator acts.
  absl::Status MaybeCoordinatorMoved(std::string_view call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // The drawn "transaction timeout" fault at a commit: aborted and fenced by the broker.
  absl::Status MaybeTimeOut() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  FakeBroker::TransactionState& Coordinator() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // Appends the queue inside the transaction; returns the last offset per partition.
  std::map<TopicPartition, int64_t> AppendQueued() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  absl::Status ValidateGroup(const ConsumerGroupMetadata& group,
                             const std::map<TopicPartition, int64_t>& offsets)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);

  FakeBroker& broker_;
  const std::string client_id_;
  const std::string transactional_id_;
  const TimeNs transaction_timeout_ns_;
  State state_ = State::kUninitialized;
  int64_t producer_id_ = -1;
  int32_t epoch_ = -1;
  absl::Status error_;  // the fatal (kAborted) or abortable (kCancelled) error
  std::vector<Queued> queue_;
  bool closed_ = false;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_TRANSACTIONAL_PRODUCER_H_
