// The fake backend: FakeBroker on the system clock, thread-safe, no faults; transactions as
// the fake broker models them (fakes/fake_transactional_producer.h).
#include <fmt/format.h>

#include "bench/backend.h"
#include "core/port/system_clock.h"
#include "fakes/fake_broker.h"

namespace restoresim::bench {
namespace {

constexpr int32_t kRawPollRecordsMax = 10000;
constexpr TimeNs kTimeoutNs = 60 * kSecond;

class FakeBackend final : public Backend {
 public:
  FakeBackend() : broker_(*SystemClock::Default(), nullptr, fakes::BrokerFaults{}) {}

  std::string Describe() const override {
    return "fake (the in-memory FakeBroker, system clock, no faults)";
  }
  Transport& transport() override { return broker_; }

  absl::Status CreateTopic(const std::string& topic, int32_t partitions) override {
    return broker_.CreateTopic(topic, partitions);
  }

  absl::Status Produce(const TopicPartition& partition,
                       const std::vector<KeyValueWrite>& records) override {
    for (const KeyValueWrite& w : records) {
      std::optional<std::string_view> value;
      if (w.value) value = *w.value;
      absl::StatusOr<int64_t> offset = broker_.Append(partition, w.key, value, 0);
      if (!offset.ok()) return offset.status();
    }
    return absl::OkStatus();
  }

  absl::Status ProduceTransactions(
      const TopicPartition& partition,
      const std::vector<ChangelogTransaction>& transactions) override {
    std::unique_ptr<TransactionalProducer> producer = broker_.NewTransactionalProducer(
        {.client_id = "bench-txn-producer",
         .transactional_id = fmt::format("bench-txn-{}", ++transactional_ids_)});
    absl::Status s = producer->InitTransactions(kTimeoutNs);
    for (const ChangelogTransaction& txn : transactions) {
      if (s.ok()) s = producer->BeginTransaction();
      for (const KeyValueWrite& w : txn.records) {
        if (s.ok()) s = producer->Send(partition, w.key, w.value, 0);
      }
      if (s.ok()) s = producer->Flush(kTimeoutNs).status();  // in the log before its end
      if (s.ok()) {
        s = txn.commit ? producer->CommitTransaction(kTimeoutNs)
                       : producer->AbortTransaction(kTimeoutNs);
      }
    }
    producer->Close();
    return s;
  }

  absl::StatusOr<int64_t> EndOffset(const TopicPartition& partition) override {
    return broker_.EndOffset(partition);
  }

  absl::StatusOr<RawConsumeResult> RawConsume(const std::string& topic, int32_t partitions,
                                              const RawSink& sink) override {
    std::vector<TopicPartition> tps;
    std::map<TopicPartition, int64_t> ends;
    for (int32_t p = 0; p < partitions; ++p) {
      tps.push_back({topic, p});
      absl::StatusOr<int64_t> end = broker_.EndOffset(tps.back());
      if (!end.ok()) return end.status();
      ends[tps.back()] = *end;
    }
    std::unique_ptr<RestoreConsumer> consumer = broker_.NewRestoreConsumer(
        {.client_id = "bench-raw", .max_poll_records = kRawPollRecordsMax});
    if (absl::Status s = consumer->Assign(tps); !s.ok()) return s;
    for (const TopicPartition& tp : tps) {
      if (absl::Status s = consumer->Seek(tp, 0); !s.ok()) return s;
    }
    RawConsumeResult result;
    std::vector<RawRecord> view;
    size_t done = 0;
    for (const auto& [tp, end] : ends) done += end == 0 ? 1 : 0;
    while (done < tps.size()) {
      absl::StatusOr<PollResult> polled = consumer->Poll(100 * kMillisecond);
      if (!polled.ok()) return polled.status();
      for (const PartitionRecords& batch : polled->partitions) {
        view.clear();
        for (const ConsumerRecord& r : batch.records) {
          view.push_back({r.key, r.value ? std::optional<std::string_view>(*r.value)
                                         : std::nullopt});
          result.bytes += static_cast<int64_t>(r.key.size() + (r.value ? r.value->size() : 0));
        }
        result.records += static_cast<int64_t>(view.size());
        sink(batch.partition.partition, view);
        if (!batch.records.empty() && batch.records.back().offset + 1 >= ends[batch.partition]) {
          ++done;
        }
      }
    }
    consumer->Close();
    return result;
  }

 private:
  fakes::FakeBroker broker_;
  int64_t transactional_ids_ = 0;
};

}  // namespace

std::unique_ptr<Backend> NewFakeBackend() { return std::make_unique<FakeBackend>(); }

}  // namespace restoresim::bench
