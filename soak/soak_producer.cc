#include "soak/soak_producer.h"

#include <fmt/format.h>

#include <chrono>

#include "core/util/check.h"

namespace restoresim::soak {
namespace {

constexpr TimeNs kProducerTickNs = 100 * kMillisecond;
constexpr TimeNs kFlushEveryNs = 1 * kSecond;
constexpr TimeNs kFlushTimeoutNs = 2 * kSecond;
constexpr TimeNs kSendBackoffNs = 100 * kMillisecond;
// Consecutive refused sends (5 s of them) after which the producer is taken for failed.
constexpr int kRefusalsBeforeReplace = 50;

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

InputProducer::InputProducer(Transport& transport, Clock& clock, std::string topic,
                             int32_t partitions, int32_t keys, int64_t records_per_second)
    : transport_(transport),
      clock_(clock),
      topic_(std::move(topic)),
      partitions_(partitions),
      keys_(keys),
      rate_(records_per_second),
      producer_(transport.NewProducer("soak-input")) {
  RS_CHECK(partitions_ > 0 && keys_ > 0 && rate_ > 0, "input of {} partitions, {} keys, {}/s",
           partitions_, keys_, rate_);
}

InputProducer::~InputProducer() {
  if (thread_.joinable()) Stop(0);
}

void InputProducer::Start() {
  RS_CHECK(!thread_.joinable(), "the input producer started twice");
  thread_ = std::thread([this]() { Run(); });
}

void InputProducer::Stop(TimeNs timeout_ns) {
  RS_CHECK(thread_.joinable(), "the input producer stopped without a start");
  stop_.store(true);
  thread_.join();
  if (timeout_ns > 0 && !producer_->Flush(timeout_ns).ok()) flush_errors_.fetch_add(1);
}

void InputProducer::SendOne() {
  const int64_t i = sent_.load();
  const int32_t key = static_cast<int32_t>(i % keys_);
  const TopicPartition tp{topic_, key % partitions_};
  int refused = 0;
  while (!stop_.load()) {
    const absl::Status s = producer_->Send(tp, fmt::format("k{}", key), "1", WallClockMs());
    if (s.ok()) {
      sent_.fetch_add(1);
      return;
    }
    send_errors_.fetch_add(1);  // the queue full while a broker is down: wait, send again
    if (!IsRetryable(s) || ++refused >= kRefusalsBeforeReplace) {
      Replace();
      refused = 0;
    }
    clock_.SleepFor(kSendBackoffNs);
  }
}

void InputProducer::Replace() {
  producer_->Close();
  producer_ = transport_.NewProducer(fmt::format("soak-input-{}", replaced_.fetch_add(1) + 1));
  RS_CHECK(producer_ != nullptr, "no producer from the transport");
}

void InputProducer::Run() {
  const TimeNs start = clock_.NowNs();
  TimeNs next_flush = start + kFlushEveryNs;
  while (!stop_.load()) {
    const TimeNs now = clock_.NowNs();
    const int64_t due = (now - start) * rate_ / kSecond;
    while (sent_.load() < due && !stop_.load()) SendOne();
    if (now >= next_flush) {
      const absl::Status flushed = producer_->Flush(kFlushTimeoutNs).status();
      if (!flushed.ok()) flush_errors_.fetch_add(1);
      if (!flushed.ok() && !IsRetryable(flushed)) Replace();  // failed for good
      next_flush = clock_.NowNs() + kFlushEveryNs;
    }
    clock_.SleepFor(kProducerTickNs);
  }
}

}  // namespace restoresim::soak
