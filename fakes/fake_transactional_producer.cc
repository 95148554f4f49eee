#include "fakes/fake_transactional_producer.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "core/util/check.h"
#include "fakes/fake_clients.h"

namespace restoresim::fakes {

FakeTransactionalProducer::FakeTransactionalProducer(FakeBroker& broker,
                                                     const TransactionalProducerConfig& config)
    : broker_(broker),
      client_id_(config.client_id.empty() ? "transactional-producer" : config.client_id),
      transactional_id_(config.transactional_id),
      transaction_timeout_ns_(config.transaction_timeout_ns) {}

FakeTransactionalProducer::~FakeTransactionalProducer() {
  SimNoAbortScope no_abort;  // Close is a scheduling point; a destructor must not throw
  Close();
}

absl::Status FakeTransactionalProducer::Enter(std::string_view call, bool allow_abortable) const {
  broker_.TransportPoint(client_id_, call);
  if (closed_) return ClosedError(call);
  if (state_ == State::kFatal) return error_;
  if (state_ == State::kAbortable && !allow_abortable) return error_;
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::WrongState(std::string_view call) const {
  static constexpr const char* kNames[] = {"uninitialized", "ready", "in transaction",
                                           "abortable", "fatal"};
  return absl::FailedPreconditionError(
      fmt::format("{}: producer {} (transactional id {}) is {}", call, client_id_,
                  transactional_id_, kNames[static_cast<int>(state_)]));
}

FakeBroker::TransactionState& FakeTransactionalProducer::Coordinator() {
  auto it = broker_.transactions_.find(transactional_id_);
  RS_CHECK(it != broker_.transactions_.end(), "{} was initialised", transactional_id_);
  return it->second;
}

absl::Status FakeTransactionalProducer::CheckNotFenced() {
  absl::Status status = broker_.CheckProducerLocked(transactional_id_, producer_id_, epoch_);
  if (status.ok()) return status;
  state_ = State::kFatal;
  error_ = status;
  queue_.clear();
  return status;
}

absl::Status FakeTransactionalProducer::MaybeInjectFence(std::string_view call) {
  if (!broker_.injector_.FenceProducer()) return absl::OkStatus();
  broker_.BumpEpochLocked(transactional_id_, Coordinator(),
                          "injected: fenced by a newer producer of the id");
  state_ = State::kFatal;
  queue_.clear();
  error_ = InjectedError(absl::StatusCode::kAborted,
                         fmt::format("{}: producer fenced: {} (transactional id {})", call,
                                     client_id_, transactional_id_));
  return error_;
}

absl::Status FakeTransactionalProducer::MaybeCoordinatorMoved(std::string_view call) {
  if (!broker_.injector_.MoveCoordinator()) return absl::OkStatus();
  return InjectedError(absl::StatusCode::kUnavailable,
                       fmt::format("{}: coordinator moved: NOT_COORDINATOR for transactional id {}",
                                   call, transactional_id_));
}

absl::Status FakeTransactionalProducer::MaybeTimeOut() {
  FakeBroker::TransactionState& state = Coordinator();
  if (!state.ongoing || !broker_.injector_.TimeOutTransaction()) return absl::OkStatus();
  ++state.aborted_by_timeout;
  broker_.BumpEpochLocked(transactional_id_, state, "injected: transaction timed out");
  state_ = State::kFatal;
  queue_.clear();
  error_ = InjectedError(absl::StatusCode::kAborted,
                         fmt::format("commit: transaction of {} timed out: producer fenced",
                                     transactional_id_));
  return error_;
}

absl::Status FakeTransactionalProducer::InitTransactions(TimeNs timeout_ns) {
  if (absl::Status s = Enter("txn_producer.init_transactions"); !s.ok()) return s;
  if (transactional_id_.empty()) {
    return absl::InvalidArgumentError("init transactions: empty transactional.id");
  }
  if (transaction_timeout_ns_ <= 0 || transaction_timeout_ns_ > kTransactionTimeoutNsMax) {
    return absl::InvalidArgumentError(fmt::format(
        "init transactions: transaction timeout {} ms outside (0, {}] (INVALID_TRANSACTION_"
        "TIMEOUT)", transaction_timeout_ns_ / kMillisecond,
        kTransactionTimeoutNsMax / kMillisecond));
  }
  if (state_ != State::kUninitialized) return WrongState("init transactions");
  if (timeout_ns < 0) return absl::InvalidArgumentError("init transactions: negative timeout");
  if (absl::Status s = broker_.Request("txn_producer.init_transactions", timeout_ns, false);
      !s.ok()) {
    return s;
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = MaybeCoordinatorMoved("init transactions"); !s.ok()) return s;
  FakeBroker::TransactionState& state =
      broker_.InitProducerIdLocked(transactional_id_, transaction_timeout_ns_);
  producer_id_ = state.producer_id;
  epoch_ = state.epoch;
  state_ = State::kReady;
  RS_CHECK_GE(producer_id_, 0);
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::BeginTransaction() {
  if (absl::Status s = Enter("txn_producer.begin_transaction"); !s.ok()) return s;
  if (state_ != State::kReady) return WrongState("begin transaction");
  state_ = State::kInTransaction;  // local, as Kafka's: the broker hears of it at the first write
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::Send(const TopicPartition& partition, std::string key,
                                             std::optional<std::string> value,
                                             int64_t timestamp_ms) {
  if (absl::Status s = Enter("txn_producer.send"); !s.ok()) return s;
  if (state_ != State::kInTransaction) return WrongState("send");
  const size_t bytes = key.size() + (value.has_value() ? value->size() : 0);
  if (bytes > PartitionLog::kRecordBytesMax) {
    return absl::InvalidArgumentError(fmt::format("producer {}: record of {} bytes exceeds {}",
                                                  client_id_, bytes,
                                                  PartitionLog::kRecordBytesMax));
  }
  {
    MutexLock lock(broker_.mu_);
    if (absl::Status s = broker_.CheckPartition(partition); !s.ok()) return s;
  }
  if (queue_.size() >= kQueuedRecordsMax) {
    return absl::FailedPreconditionError(fmt::format(
        "producer {}: {} records queued without a Flush", client_id_, kQueuedRecordsMax));
  }
  queue_.push_back(Queued{partition, std::move(key), std::move(value), timestamp_ms});
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeTransactionalProducer::Flush(
    TimeNs timeout_ns) {
  if (absl::Status s = Enter("txn_producer.flush"); !s.ok()) return s;
  if (timeout_ns < 0) return absl::InvalidArgumentError("flush: negative timeout");
  if (queue_.empty()) return std::map<TopicPartition, int64_t>{};
  RS_CHECK(state_ == State::kInTransaction, "records are queued only in a transaction");
  // A failed flush keeps the queue: nothing was appended, and the next Flush retries it all.
  if (absl::Status s = broker_.Request("txn_producer.flush", timeout_ns, false); !s.ok()) {
    return s;
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = CheckNotFenced(); !s.ok()) return s;
  if (absl::Status s = MaybeInjectFence("flush"); !s.ok()) return s;
  std::set<TopicPartition> partitions;
  for (const Queued& q : queue_) partitions.insert(q.partition);
  if (absl::Status s = broker_.CheckLeaders({partitions.begin(), partitions.end()}); !s.ok()) {
    return s;
  }
  return AppendQueued();
}

std::map<TopicPartition, int64_t> FakeTransactionalProducer::AppendQueued() {
  FakeBroker::TransactionState& state = Coordinator();
  std::map<TopicPartition, int64_t> last_offsets;
  for (const Queued& q : queue_) {
    std::optional<std::string_view> value;
    if (q.value.has_value()) value = *q.value;
    absl::StatusOr<int64_t> offset =
        broker_.AppendTransactionalLocked(state, q.partition, q.key, value, q.timestamp_ms);
    // Partitions and sizes were checked at Send, and topics are never deleted.
    RS_CHECK(offset.ok(), "append to {}: {}", q.partition.ToString(),
             std::string(offset.status().message()));
    last_offsets[q.partition] = *offset;
  }
  queue_.clear();
  RS_CHECK(state.ongoing || last_offsets.empty());
  return last_offsets;
}

absl::Status FakeTransactionalProducer::ValidateGroup(
    const ConsumerGroupMetadata& group, const std::map<TopicPartition, int64_t>& offsets) {
  if (group.group_id.empty()) {
    return absl::InvalidArgumentError("send offsets to transaction: empty group id");
  }
  if (auto it = broker_.streams_groups_.find(group.group_id); it != broker_.streams_groups_.end()) {
    // A streams group checks a TxnOffsetCommit as an OffsetCommit (Kafka's
    // validateOffsetCommit), the member's epoch as the generation.
    it->second.ExpireSessions(broker_.clock_.NowNs() / kMillisecond);
    std::vector<TopicPartition> partitions;
    for (const auto& [tp, offset] : offsets) partitions.push_back(tp);
    if (const int16_t code = it->second.ValidateOffsetCommit(group.member_id,
                                                             group.generation_id, partitions);
        code != 0) {
      return absl::FailedPreconditionError(fmt::format(
          "send offsets to transaction: member {} at epoch {} of streams group {}: {}",
          group.member_id, group.generation_id, group.group_id,
          code == streams_errors::kUnknownMemberId ? "UNKNOWN_MEMBER_ID" : "STALE_MEMBER_EPOCH"));
    }
    return absl::OkStatus();
  }
  GroupCoordinator& coordinator = broker_.Group(group.group_id);
  if (!group.member_id.empty() && !coordinator.IsActive(group.member_id)) {
    return absl::FailedPreconditionError(fmt::format(
        "send offsets to transaction: member {} is not in group {} (UNKNOWN_MEMBER_ID)",
        group.member_id, group.group_id));
  }
  if (group.generation_id >= 0 && group.generation_id != coordinator.generation()) {
    return absl::FailedPreconditionError(fmt::format(
        "send offsets to transaction: generation {} of group {} is not the current {} "
        "(ILLEGAL_GENERATION)", group.generation_id, group.group_id, coordinator.generation()));
  }
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::SendOffsetsToTransaction(
    const std::map<TopicPartition, int64_t>& offsets, const ConsumerGroupMetadata& group) {
  if (absl::Status s = Enter("txn_producer.send_offsets"); !s.ok()) return s;
  if (state_ != State::kInTransaction) return WrongState("send offsets to transaction");
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("send offsets: negative offset {} for {}", offset, tp.ToString()));
    }
  }
  const TimeNs timeout_ns = broker_.options_.request_timeout_ns;
  if (absl::Status s = broker_.Request("txn_producer.send_offsets", timeout_ns, false); !s.ok()) {
    return s;
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = MaybeCoordinatorMoved("send offsets"); !s.ok()) return s;
  if (absl::Status s = CheckNotFenced(); !s.ok()) return s;
  if (absl::Status s = ValidateGroup(group, offsets); !s.ok()) {
    // Kafka: the TxnOffsetCommit failed, the transaction can only be aborted.
    state_ = State::kAbortable;
    error_ = absl::CancelledError(
        fmt::format("transaction of {} must be aborted: {}", transactional_id_,
                    std::string(s.message())));
    return s;
  }
  FakeBroker::TransactionState& state = Coordinator();
  broker_.StartTransactionLocked(state);
  for (const auto& [tp, offset] : offsets) state.offsets[group.group_id][tp] = offset;
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::CommitTransaction(TimeNs timeout_ns) {
  if (absl::Status s = Enter("txn_producer.commit_transaction"); !s.ok()) return s;
  if (state_ != State::kInTransaction) return WrongState("commit transaction");
  if (timeout_ns < 0) return absl::InvalidArgumentError("commit: negative timeout");
  // Kafka's commitTransaction flushes first; a failed flush leaves the transaction open.
  if (absl::StatusOr<std::map<TopicPartition, int64_t>> flushed = Flush(timeout_ns);
      !flushed.ok()) {
    return flushed.status();
  }
  if (absl::Status s = broker_.Request("txn_producer.commit_transaction", timeout_ns, false);
      !s.ok()) {
    return s;
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = MaybeCoordinatorMoved("commit"); !s.ok()) return s;
  if (absl::Status s = CheckNotFenced(); !s.ok()) return s;
  if (absl::Status s = MaybeInjectFence("commit"); !s.ok()) return s;
  if (absl::Status s = MaybeTimeOut(); !s.ok()) return s;
  FakeBroker::TransactionState& state = Coordinator();
  if (state.ongoing) broker_.EndTransactionLocked(transactional_id_, state, /*commit=*/true);
  state_ = State::kReady;
  RS_CHECK(queue_.empty() && !state.ongoing);
  return absl::OkStatus();
}

absl::Status FakeTransactionalProducer::AbortTransaction(TimeNs timeout_ns) {
  if (absl::Status s = Enter("txn_producer.abort_transaction", true); !s.ok()) return s;
  if (state_ != State::kInTransaction && state_ != State::kAbortable) {
    return WrongState("abort transaction");
  }
  if (timeout_ns < 0) return absl::InvalidArgumentError("abort: negative timeout");
  queue_.clear();  // never sent: nothing of it reaches the log
  if (absl::Status s = broker_.Request("txn_producer.abort_transaction", timeout_ns, false);
      !s.ok()) {
    return s;
  }
  MutexLock lock(broker_.mu_);
  if (absl::Status s = MaybeCoordinatorMoved("abort"); !s.ok()) return s;
  if (absl::Status s = CheckNotFenced(); !s.ok()) return s;
  FakeBroker::TransactionState& state = Coordinator();
  if (state.ongoing) broker_.EndTransactionLocked(transactional_id_, state, /*commit=*/false);
  state_ = State::kReady;
  error_ = absl::OkStatus();
  RS_CHECK(!state.ongoing);
  return absl::OkStatus();
}

void FakeTransactionalProducer::Close() {
  broker_.TransportPoint(client_id_, "txn_producer.close");
  closed_ = true;
  queue_.clear();  // records of a transaction that will never commit
}

}  // namespace restoresim::fakes
