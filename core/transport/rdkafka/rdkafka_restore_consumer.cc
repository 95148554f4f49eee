// The restore consumer: no group membership; everything is ConsumerCore in kNoGroup mode.
#include <fmt/format.h>

#include "core/transport/rdkafka/rdkafka_clients.h"

namespace restoresim::rdkafka {

absl::Status ClosedError(std::string_view call) {
  return absl::FailedPreconditionError(fmt::format("{}: the client is closed", call));
}

absl::StatusOr<HandlePtr> NewConsumerHandle(const std::vector<Setting>& settings) {
  absl::StatusOr<rd_kafka_conf_t*> conf = NewConf(settings);
  if (!conf.ok()) return conf.status();
  return NewHandle(RD_KAFKA_CONSUMER, *conf);
}

RdKafkaRestoreConsumer::RdKafkaRestoreConsumer(const std::vector<Setting>& settings,
                                               const ConsumerConfig& config,
                                               const RdKafkaOptions& options, Clock& clock)
    : options_(options) {
  absl::StatusOr<HandlePtr> handle = NewConsumerHandle(settings);
  if (!handle.ok()) {
    init_status_ = handle.status();
    return;
  }
  handle_ = std::move(*handle);
  core_ = std::make_unique<ConsumerCore>(handle_.get(), ConsumerCore::Mode::kNoGroup, config,
                                         options, clock);
}

RdKafkaRestoreConsumer::~RdKafkaRestoreConsumer() { Close(); }

absl::Status RdKafkaRestoreConsumer::Enter(std::string_view call) const {
  if (closed_) return ClosedError(call);
  return init_status_;
}

absl::Status RdKafkaRestoreConsumer::Assign(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.assign"); !s.ok()) return s;
  // Kafka's assign() of an unknown partition fails at the first fetch; the port says at once.
  std::map<std::string, int32_t> counts;
  for (const TopicPartition& tp : partitions) {
    if (!counts.contains(tp.topic)) {
      absl::StatusOr<int32_t> count =
          PartitionCount(handle_.get(), tp.topic, options_.request_timeout_ns);
      if (!count.ok()) return count.status();
      counts[tp.topic] = *count;
    }
    if (tp.partition < 0 || tp.partition >= counts[tp.topic]) {
      return absl::NotFoundError(fmt::format("assign: unknown partition {}", tp.ToString()));
    }
  }
  core_->SetAssignment(partitions);
  return absl::OkStatus();
}

absl::Status RdKafkaRestoreConsumer::Unassign() {
  if (absl::Status s = Enter("restore.unassign"); !s.ok()) return s;
  core_->SetAssignment({});
  return absl::OkStatus();
}

std::vector<TopicPartition> RdKafkaRestoreConsumer::Assignment() const {
  return core_ == nullptr ? std::vector<TopicPartition>{} : core_->Assignment();
}

absl::Status RdKafkaRestoreConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("restore.seek"); !s.ok()) return s;
  return core_->Seek(partition, offset);
}

absl::Status RdKafkaRestoreConsumer::SeekToBeginning(
    const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.seek_to_beginning"); !s.ok()) return s;
  return core_->SeekTo(partitions, OffsetReset::kEarliest);
}

absl::Status RdKafkaRestoreConsumer::SeekToEnd(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.seek_to_end"); !s.ok()) return s;
  return core_->SeekTo(partitions, OffsetReset::kLatest);
}

absl::StatusOr<int64_t> RdKafkaRestoreConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("restore.position"); !s.ok()) return s;
  return core_->Position(partition);
}

absl::Status RdKafkaRestoreConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.pause"); !s.ok()) return s;
  return core_->SetPaused(partitions, true);
}

absl::Status RdKafkaRestoreConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("restore.resume"); !s.ok()) return s;
  return core_->SetPaused(partitions, false);
}

std::vector<TopicPartition> RdKafkaRestoreConsumer::Paused() const {
  return core_ == nullptr ? std::vector<TopicPartition>{} : core_->Paused();
}

absl::StatusOr<PollResult> RdKafkaRestoreConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("restore.poll"); !s.ok()) return s;
  return core_->Poll(timeout_ns);
}

void RdKafkaRestoreConsumer::Close() {
  if (closed_) return;
  closed_ = true;
  if (core_ == nullptr) return;
  core_->UnassignAll();
  core_.reset();
  rd_kafka_consumer_close(handle_.get());
  handle_.reset();
}

}  // namespace restoresim::rdkafka
