// The restore consumer, the admin client and the producer of the fake broker. The main
// consumer, with its group membership, is in fake_main_consumer.cc.
#include "fakes/fake_clients.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/util/check.h"

namespace restoresim::fakes {

absl::Status ValidateConsumerConfig(const ConsumerConfig& config) {
  if (config.max_poll_records >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format("consumer {}: max_poll_records {} < 1",
                                                config.client_id, config.max_poll_records));
}

absl::Status ClosedError(std::string_view call) {
  return absl::FailedPreconditionError(fmt::format("{}: the client is closed", call));
}

// ---- FakeRestoreConsumer ----

FakeRestoreConsumer::FakeRestoreConsumer(FakeBroker& broker, const ConsumerConfig& config)
    : broker_(broker),
      client_id_(config.client_id.empty() ? "restore-consumer" : config.client_id),
      config_status_(ValidateConsumerConfig(config)),
      fetcher_(broker, config) {}

FakeRestoreConsumer::~FakeRestoreConsumer() {
  SimNoAbortScope no_abort;  // Close is a scheduling point; a destructor must not throw
  Close();
}

absl::Status FakeRestoreConsumer::Enter(std::string_view call) const {
  broker_.TransportPoint(client_id_, call);
  if (closed_) return ClosedError(call);
  return config_status_;
}

absl::Status FakeRestoreConsumer::Assign(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.assign"); !s.ok()) return s;
  {
    MutexLock lock(broker_.mu_);
    // The partitions are looked up in the metadata (the rdkafka adapter asks the cluster).
    if (broker_.injector_.LoseMetadata()) {
      return InjectedError(absl::StatusCode::kUnavailable, "metadata unavailable: restore.assign");
    }
    for (const TopicPartition& tp : partitions) {
      if (absl::Status s = broker_.CheckPartition(tp); !s.ok()) return s;
    }
  }
  fetcher_.SetAssignment(partitions);
  return absl::OkStatus();
}

absl::Status FakeRestoreConsumer::Unassign() {
  if (absl::Status s = Enter("restore.unassign"); !s.ok()) return s;
  fetcher_.Clear();
  return absl::OkStatus();
}

std::vector<TopicPartition> FakeRestoreConsumer::Assignment() const {
  broker_.TransportPoint(client_id_, "restore.assignment");
  return fetcher_.Assignment();
}

absl::Status FakeRestoreConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("restore.seek"); !s.ok()) return s;
  return fetcher_.Seek(partition, offset);
}

absl::Status FakeRestoreConsumer::SeekToBeginning(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.seek_to_beginning"); !s.ok()) return s;
  return fetcher_.SeekTo(partitions, OffsetReset::kEarliest);
}

absl::Status FakeRestoreConsumer::SeekToEnd(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.seek_to_end"); !s.ok()) return s;
  return fetcher_.SeekTo(partitions, OffsetReset::kLatest);
}

absl::StatusOr<int64_t> FakeRestoreConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("restore.position"); !s.ok()) return s;
  return fetcher_.Position(partition);
}

absl::Status FakeRestoreConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.pause"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, true);
}

absl::Status FakeRestoreConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.resume"); !s.ok()) return s;
  return fetcher_.SetPaused(partitions, false);
}

std::vector<TopicPartition> FakeRestoreConsumer::Paused() const {
  broker_.TransportPoint(client_id_, "restore.paused");
  return fetcher_.Paused();
}

absl::StatusOr<PollResult> FakeRestoreConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("restore.poll"); !s.ok()) return s;
  if (timeout_ns < 0) return absl::InvalidArgumentError("poll: negative timeout");
  const TimeNs deadline_ns = DeadlineAfter(broker_.clock_.NowNs(), timeout_ns);
  if (absl::Status s = broker_.Request("restore.poll", timeout_ns, true); !s.ok()) return s;
  return fetcher_.FetchUntil(deadline_ns);
}

void FakeRestoreConsumer::Close() {
  broker_.TransportPoint(client_id_, "restore.close");
  closed_ = true;
  fetcher_.Clear();
}

// ---- FakeAdmin ----

FakeAdmin::FakeAdmin(FakeBroker& broker, std::string client_id)
    : broker_(broker), client_id_(std::move(client_id)) {}

absl::Status FakeAdmin::Request(std::string_view call) {
  broker_.TransportPoint(client_id_, call);
  return broker_.Request(call, broker_.options_.request_timeout_ns, false);
}

absl::Status FakeAdmin::CreateTopic(const std::string& topic, int32_t partitions) {
  if (absl::Status s = Request("admin.create_topic"); !s.ok()) return s;
  return broker_.CreateTopic(topic, partitions);
}

absl::StatusOr<int32_t> FakeAdmin::PartitionCount(const std::string& topic) {
  if (absl::Status s = Request("admin.partition_count"); !s.ok()) return s;
  return broker_.PartitionCount(topic);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeAdmin::EndOffsets(
    const std::vector<TopicPartition>& partitions) {
  return Offsets("admin.end_offsets", partitions, true);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeAdmin::EndOffsetsFor(
    const std::vector<TopicPartition>& partitions, IsolationLevel isolation_level) {
  if (isolation_level == IsolationLevel::kReadUncommitted) {
    return Offsets("admin.end_offsets", partitions, true);
  }
  return Offsets("admin.stable_end_offsets", partitions, true, /*stable=*/true);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeAdmin::BeginningOffsets(
    const std::vector<TopicPartition>& partitions) {
  return Offsets("admin.beginning_offsets", partitions, false);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeAdmin::Offsets(
    std::string_view call, const std::vector<TopicPartition>& partitions, bool end,
    bool stable) {
  if (absl::Status s = Request(call); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  for (const TopicPartition& tp : partitions) {
    if (absl::Status s = broker_.CheckPartition(tp); !s.ok()) return s;
  }
  if (absl::Status s = broker_.CheckLeaders(partitions); !s.ok()) return s;
  if (stable) broker_.ExpireTransactionsLocked();
  std::map<TopicPartition, int64_t> offsets;
  for (const TopicPartition& tp : partitions) {
    const PartitionLog& log = broker_.Log(tp);
    offsets[tp] = !end ? log.log_start_offset()
                       : (stable ? log.last_stable_offset() : log.end_offset());
  }
  return offsets;
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeAdmin::CommittedOffsets(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Request("admin.committed_offsets"); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  for (const TopicPartition& tp : partitions) {
    if (absl::Status s = broker_.CheckPartition(tp); !s.ok()) return s;
  }
  std::map<TopicPartition, int64_t> offsets;
  auto it = broker_.groups_.find(group);
  if (it == broker_.groups_.end()) return offsets;  // a group nobody joined has no offsets
  for (const TopicPartition& tp : partitions) {
    if (auto c = it->second.committed().find(tp); c != it->second.committed().end()) {
      offsets[tp] = c->second;
    }
  }
  return offsets;
}

absl::Status FakeAdmin::DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets) {
  if (absl::Status s = Request("admin.delete_records"); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  std::vector<TopicPartition> partitions;
  for (const auto& [tp, offset] : before_offsets) {
    if (absl::Status s = broker_.CheckPartition(tp); !s.ok()) return s;
    partitions.push_back(tp);
  }
  if (absl::Status s = broker_.CheckLeaders(partitions); !s.ok()) return s;
  return broker_.DeleteRecordsLocked(before_offsets);
}

// ---- FakeProducer ----

FakeProducer::FakeProducer(FakeBroker& broker, std::string client_id)
    : broker_(broker), client_id_(std::move(client_id)) {}

FakeProducer::~FakeProducer() {
  SimNoAbortScope no_abort;
  Close();
}

absl::Status FakeProducer::Enter(std::string_view call) const {
  broker_.TransportPoint(client_id_, call);
  if (closed_) return ClosedError(call);
  if (fenced_) {
    return InjectedError(absl::StatusCode::kAborted,
                         fmt::format("{}: producer {} is fenced", call, client_id_));
  }
  return absl::OkStatus();
}

absl::Status FakeProducer::Fence() {
  fenced_ = true;
  queue_.clear();  // the fenced producer's unacknowledged records are aborted
  return InjectedError(absl::StatusCode::kAborted, fmt::format("producer fenced: {}", client_id_));
}

absl::Status FakeProducer::Send(const TopicPartition& partition, std::string key,
                                std::optional<std::string> value, int64_t timestamp_ms) {
  if (absl::Status s = Enter("producer.send"); !s.ok()) return s;
  const size_t bytes = key.size() + (value.has_value() ? value->size() : 0);
  if (bytes > PartitionLog::kRecordBytesMax) {
    return absl::InvalidArgumentError(fmt::format("producer {}: record of {} bytes exceeds {}",
                                                  client_id_, bytes,
                                                  PartitionLog::kRecordBytesMax));
  }
  {
    MutexLock lock(broker_.mu_);
    if (absl::Status s = broker_.CheckPartition(partition); !s.ok()) return s;
    if (broker_.injector_.FenceProducer()) return Fence();
  }
  if (queue_.size() >= kQueuedRecordsMax) {
    return absl::FailedPreconditionError(fmt::format(
        "producer {}: {} records queued without a Flush", client_id_, kQueuedRecordsMax));
  }
  queue_.push_back(Queued{partition, std::move(key), std::move(value), timestamp_ms});
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> FakeProducer::Flush(TimeNs timeout_ns) {
  if (absl::Status s = Enter("producer.flush"); !s.ok()) return s;
  if (timeout_ns < 0) return absl::InvalidArgumentError("flush: negative timeout");
  if (queue_.empty()) return std::map<TopicPartition, int64_t>{};
  // A failed flush keeps the queue: nothing was appended, and the next Flush retries it all.
  if (absl::Status s = broker_.Request("producer.flush", timeout_ns, false); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  if (broker_.injector_.FenceProducer()) return Fence();
  std::set<TopicPartition> partitions;
  for (const Queued& q : queue_) partitions.insert(q.partition);
  if (absl::Status s = broker_.CheckLeaders({partitions.begin(), partitions.end()}); !s.ok()) {
    return s;
  }
  return AppendQueued();
}

std::map<TopicPartition, int64_t> FakeProducer::AppendQueued() {
  std::map<TopicPartition, int64_t> last_offsets;
  for (const Queued& q : queue_) {
    std::optional<std::string_view> value;
    if (q.value.has_value()) value = *q.value;
    absl::StatusOr<int64_t> offset =
        broker_.AppendLocked(q.partition, q.key, value, q.timestamp_ms);
    // Partitions and sizes were checked at Send, and topics are never deleted.
    RS_CHECK(offset.ok(), "append to {}: {}", q.partition.ToString(),
             std::string(offset.status().message()));
    last_offsets[q.partition] = *offset;
  }
  queue_.clear();
  return last_offsets;
}

void FakeProducer::Close() {
  broker_.TransportPoint(client_id_, "producer.close");
  if (closed_) return;
  closed_ = true;
  if (fenced_ || queue_.empty()) return;
  MutexLock lock(broker_.mu_);
  AppendQueued();  // Kafka's close() completes the sends already made
}

}  // namespace restoresim::fakes
