// The transactional producer over librdkafka's transactional API (rd_kafka_init_transactions,
// begin, send_offsets_to_transaction, commit, abort). Records go through the wrapped
// RdKafkaProducer (its delivery reports give Flush's offsets); errors are translated by
// rdkafka_errors.cc only.
#include <fmt/format.h>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"

namespace restoresim::rdkafka {

RdKafkaTransactionalProducer::RdKafkaTransactionalProducer(const std::vector<Setting>& settings,
                                                           const RdKafkaOptions& options)
    : producer_(settings, options) {}

absl::StatusOr<rd_kafka_t*> RdKafkaTransactionalProducer::Handle(std::string_view call) const {
  if (producer_.closed_) return ClosedError(call);
  if (!producer_.init_status_.ok()) return producer_.init_status_;
  return producer_.handle_.get();
}

absl::Status RdKafkaTransactionalProducer::Send(const TopicPartition& partition, std::string key,
                                                std::optional<std::string> value,
                                                int64_t timestamp_ms) {
  return producer_.Send(partition, std::move(key), std::move(value), timestamp_ms);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaTransactionalProducer::Flush(
    TimeNs timeout_ns) {
  return producer_.Flush(timeout_ns);
}

void RdKafkaTransactionalProducer::Close() { producer_.Close(); }

absl::Status RdKafkaTransactionalProducer::InitTransactions(TimeNs timeout_ns) {
  absl::StatusOr<rd_kafka_t*> rk = Handle("init transactions");
  if (!rk.ok()) return rk.status();
  if (timeout_ns < 0) return absl::InvalidArgumentError("init transactions: negative timeout");
  return ToStatus(rd_kafka_init_transactions(*rk, TimeoutMs(timeout_ns)), "init transactions");
}

absl::Status RdKafkaTransactionalProducer::BeginTransaction() {
  absl::StatusOr<rd_kafka_t*> rk = Handle("begin transaction");
  if (!rk.ok()) return rk.status();
  return ToStatus(rd_kafka_begin_transaction(*rk), "begin transaction");
}

absl::Status RdKafkaTransactionalProducer::SendOffsetsToTransaction(
    const std::map<TopicPartition, int64_t>& offsets, const ConsumerGroupMetadata& group) {
  absl::StatusOr<rd_kafka_t*> rk = Handle("send offsets to transaction");
  if (!rk.ok()) return rk.status();
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("send offsets: negative offset {} for {}", offset, tp.ToString()));
    }
  }
  rd_kafka_consumer_group_metadata_t* cgmd = nullptr;
  if (!group.opaque.empty()) {
    if (absl::Status s = ToStatus(rd_kafka_consumer_group_metadata_read(
                                      &cgmd, group.opaque.data(), group.opaque.size()),
                                  "send offsets: group metadata");
        !s.ok()) {
      return s;
    }
  } else {
    cgmd = rd_kafka_consumer_group_metadata_new_with_genid(
        group.group_id.c_str(), group.generation_id, group.member_id.c_str(), nullptr);
  }
  std::vector<std::pair<TopicPartition, int64_t>> entries(offsets.begin(), offsets.end());
  ListPtr list = ToList(entries);
  absl::Status status = ToStatus(
      rd_kafka_send_offsets_to_transaction(*rk, list.get(), cgmd,
                                           TimeoutMs(producer_.options_.request_timeout_ns)),
      fmt::format("send offsets of group {} to transaction", group.group_id));
  rd_kafka_consumer_group_metadata_destroy(cgmd);
  return status;
}

absl::Status RdKafkaTransactionalProducer::CommitTransaction(TimeNs timeout_ns) {
  absl::StatusOr<rd_kafka_t*> rk = Handle("commit transaction");
  if (!rk.ok()) return rk.status();
  if (timeout_ns < 0) return absl::InvalidArgumentError("commit: negative timeout");
  // librdkafka flushes first; delivery reports are served inside, and their offsets wait for
  // the next Flush, as the port's Flush reports what was acknowledged since the last one.
  return ToStatus(rd_kafka_commit_transaction(*rk, TimeoutMs(timeout_ns)), "commit transaction");
}

absl::Status RdKafkaTransactionalProducer::AbortTransaction(TimeNs timeout_ns) {
  absl::StatusOr<rd_kafka_t*> rk = Handle("abort transaction");
  if (!rk.ok()) return rk.status();
  if (timeout_ns < 0) return absl::InvalidArgumentError("abort: negative timeout");
  absl::Status status =
      ToStatus(rd_kafka_abort_transaction(*rk, TimeoutMs(timeout_ns)), "abort transaction");
  // Records of the aborted transaction that failed delivery are not the next Flush's error.
  if (status.ok()) producer_.delivery_error_ = absl::OkStatus();
  return status;
}

}  // namespace restoresim::rdkafka
