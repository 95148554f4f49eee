// The kafka backend: the runtime's RdKafkaTransport for topics, production and the runtime
// itself; for the raw-consumption limit, librdkafka's batch API called directly with the
// restore consumer's settings (rdkafka_settings.cc), so the limit differs from the runtime's
// consumer only by what the adapter and the runtime add.
#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <unistd.h>

#include <array>
#include <map>

#include "bench/backend.h"
#include "core/port/system_clock.h"
#include "core/transport/rdkafka/rdkafka_settings.h"
#include "core/transport/rdkafka/rdkafka_transport.h"

namespace restoresim::bench {
namespace {

constexpr TimeNs kFlushTimeoutNs = 120 * kSecond;
constexpr TimeNs kRawConsumeTimeoutNs = 600 * kSecond;
constexpr size_t kRawBatchMax = 10000;

class KafkaBackend final : public Backend {
 public:
  explicit KafkaBackend(std::string bootstrap)
      : options_{.bootstrap_servers = std::move(bootstrap)},
        transport_(options_, *SystemClock::Default()),
        admin_(transport_.NewAdmin("bench-admin")),
        producer_(transport_.NewProducer("bench-producer")) {}

  std::string Describe() const override {
    return fmt::format("kafka at {} ({})", options_.bootstrap_servers,
                       rdkafka::LibrdkafkaVersion());
  }
  Transport& transport() override { return transport_; }
  std::string bootstrap_servers() const override { return options_.bootstrap_servers; }

  absl::Status CreateTopic(const std::string& topic, int32_t partitions) override {
    if (absl::Status s = admin_->CreateTopic(topic, partitions); !s.ok()) return s;
    // Metadata reaches the brokers asynchronously: wait until the topic answers.
    absl::StatusOr<int32_t> count = absl::NotFoundError(topic);
    for (int i = 0; i < 100 && !count.ok(); ++i) {
      count = admin_->PartitionCount(topic);
      if (!count.ok()) SystemClock::Default()->SleepFor(100 * kMillisecond);
    }
    return count.status();
  }

  absl::Status Produce(const TopicPartition& partition,
                       const std::vector<KeyValueWrite>& records) override {
    for (const KeyValueWrite& w : records) {
      absl::Status s = producer_->Send(partition, w.key, w.value, WallClockMs());
      if (absl::IsUnavailable(s)) {
        // The producer's local queue is full (queue.buffering.max.messages): wait until what
        // it holds is acknowledged, then send again.
        if (absl::Status f = producer_->Flush(kFlushTimeoutNs).status(); !f.ok()) return f;
        s = producer_->Send(partition, w.key, w.value, WallClockMs());
      }
      if (!s.ok()) return s;
    }
    return producer_->Flush(kFlushTimeoutNs).status();
  }

  absl::Status ProduceTransactions(
      const TopicPartition& partition,
      const std::vector<ChangelogTransaction>& transactions) override;

  absl::StatusOr<int64_t> EndOffset(const TopicPartition& partition) override {
    absl::StatusOr<std::map<TopicPartition, int64_t>> ends = admin_->EndOffsets({partition});
    if (!ends.ok()) return ends.status();
    return ends->at(partition);
  }

  absl::StatusOr<RawConsumeResult> RawConsume(const std::string& topic, int32_t partitions,
                                              const RawSink& sink) override;

 private:
  static int64_t WallClockMs();

  const rdkafka::RdKafkaOptions options_;
  rdkafka::RdKafkaTransport transport_;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<Producer> producer_;
};

int64_t KafkaBackend::WallClockMs() {
  // Wall-clock timestamps, as a real producer's (the local cluster has no time retention, but
  // a cluster given with --bootstrap-servers may).
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::Status KafkaBackend::ProduceTransactions(
    const TopicPartition& partition, const std::vector<ChangelogTransaction>& transactions) {
  // A transactional.id of its own per call: nothing to fence, no transaction left open.
  std::unique_ptr<TransactionalProducer> producer = transport_.NewTransactionalProducer(
      {.client_id = "bench-txn-producer",
       .transactional_id = fmt::format("bench-txn-{}-{}-{}", getpid(), partition.ToString(),
                                       WallClockMs())});
  absl::Status s = producer->InitTransactions(kFlushTimeoutNs);
  for (const ChangelogTransaction& txn : transactions) {
    if (s.ok()) s = producer->BeginTransaction();
    for (const KeyValueWrite& w : txn.records) {
      if (!s.ok()) break;
      s = producer->Send(partition, w.key, w.value, WallClockMs());
      if (absl::IsUnavailable(s)) {  // the local queue is full: as Produce
        s = producer->Flush(kFlushTimeoutNs).status();
        if (s.ok()) s = producer->Send(partition, w.key, w.value, WallClockMs());
      }
    }
    // In the log before the transaction ends (an abort drops what is still queued).
    if (s.ok()) s = producer->Flush(kFlushTimeoutNs).status();
    if (s.ok()) {
      s = txn.commit ? producer->CommitTransaction(kFlushTimeoutNs)
                     : producer->AbortTransaction(kFlushTimeoutNs);
    }
  }
  producer->Close();
  return s;
}

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const {
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }
};

absl::StatusOr<RawConsumeResult> KafkaBackend::RawConsume(const std::string& topic,
                                                          int32_t partitions,
                                                          const RawSink& sink) {
  std::map<int32_t, int64_t> ends;  // partitions still to read, to their end offsets
  for (int32_t p = 0; p < partitions; ++p) {
    absl::StatusOr<int64_t> end = EndOffset({topic, p});
    if (!end.ok()) return end.status();
    if (*end > 0) ends[p] = *end;
  }
  const ConsumerConfig config{.client_id = "bench-raw", .max_poll_records = kRawBatchMax};
  absl::StatusOr<rd_kafka_conf_t*> conf = rdkafka::NewConf(rdkafka::SettingsFor(
      rdkafka::ClientKind::kRestoreConsumer, options_, config.client_id, &config, ""));
  if (!conf.ok()) return conf.status();
  char error[512];
  std::unique_ptr<rd_kafka_t, RdKafkaDeleter> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, *conf, error, sizeof(error)));
  if (rk == nullptr) return absl::InternalError(fmt::format("rd_kafka_new: {}", error));
  rd_kafka_poll_set_consumer(rk.get());
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (const auto& [p, end] : ends) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = 0;
  }
  const rd_kafka_resp_err_t err = rd_kafka_assign(rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(fmt::format("assign: {}", rd_kafka_err2str(err)));
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(rk.get());
  std::array<rd_kafka_message_t*, kRawBatchMax> batch;
  std::vector<RawRecord> view;
  RawConsumeResult result;
  absl::Status failure;
  const TimeNs deadline = SystemClock::Default()->NowNs() + kRawConsumeTimeoutNs;
  while (!ends.empty() && failure.ok() && SystemClock::Default()->NowNs() < deadline) {
    const ssize_t n = rd_kafka_consume_batch_queue(queue, 100, batch.data(), batch.size());
    view.clear();
    int32_t view_partition = -1;
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[static_cast<size_t>(i)];
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // Not an error: the restore consumer's settings ask for these events (a partition
        // caught up), and with several partitions one reaches its end before the others.
      } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (failure.ok()) failure = absl::UnavailableError(rd_kafka_message_errstr(m));
      } else {
        if (m->partition != view_partition && !view.empty()) {
          sink(view_partition, view);
          view.clear();
        }
        view_partition = m->partition;
        std::string_view key(static_cast<const char*>(m->key), m->key == nullptr ? 0 : m->key_len);
        std::optional<std::string_view> value;
        if (m->payload != nullptr) value.emplace(static_cast<const char*>(m->payload), m->len);
        view.push_back({key, value});
        result.bytes += static_cast<int64_t>(key.size() + (value ? value->size() : 0));
        ++result.records;
        auto it = ends.find(m->partition);
        if (it != ends.end() && m->offset + 1 >= it->second) ends.erase(it);
      }
    }
    if (!view.empty()) sink(view_partition, view);
    for (ssize_t i = 0; i < n; ++i) rd_kafka_message_destroy(batch[static_cast<size_t>(i)]);
  }
  rd_kafka_queue_destroy(queue);
  if (!failure.ok()) return failure;
  if (!ends.empty()) return absl::DeadlineExceededError("raw consumption did not reach the end");
  return result;
}

}  // namespace

bool HaveKafkaBackend() { return true; }

absl::StatusOr<std::unique_ptr<Backend>> NewKafkaBackend(const std::string& bootstrap_servers) {
  if (bootstrap_servers.empty()) return absl::InvalidArgumentError("no bootstrap servers");
  return std::unique_ptr<Backend>(new KafkaBackend(bootstrap_servers));
}

}  // namespace restoresim::bench
