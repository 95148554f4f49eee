// The producer: idempotent (acks=all), records copied into librdkafka's queue at Send, delivery
// reports collected on this client's thread (rd_kafka_poll inside Send, rd_kafka_flush inside
// Flush) into the last acknowledged offset per partition.
#include <fmt/format.h>

#include <algorithm>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"

namespace restoresim::rdkafka {
namespace {

// A Send that finds librdkafka's queue full serves delivery reports (which make room) in turns
// of kQueueFullWaitMs, up to kQueueFullWaitsMax turns, before it reports kUnavailable: about
// 60 s, Kafka's max.block.ms, for which KafkaProducer#send blocks on a full buffer. One turn
// was too little: a task processing a burst of input (100,000 changelog writes between commits,
// the queue's default capacity) on a loaded machine found the queue still full after 100 ms,
// and the stream thread died of it.
constexpr int kQueueFullWaitMs = 100;
constexpr int kQueueFullWaitsMax = 600;
// What Close waits for the sends already made (Kafka's close() completes them too).
constexpr int kCloseFlushMs = 30'000;

}  // namespace

RdKafkaProducer::RdKafkaProducer(const std::vector<Setting>& settings,
                                 const RdKafkaOptions& options)
    : options_(options) {
  absl::StatusOr<rd_kafka_conf_t*> conf = NewConf(settings);
  if (!conf.ok()) {
    init_status_ = conf.status();
    return;
  }
  rd_kafka_conf_set_opaque(*conf, this);
  rd_kafka_conf_set_dr_msg_cb(*conf, &RdKafkaProducer::DeliveryCallback);
  absl::StatusOr<HandlePtr> handle = NewHandle(RD_KAFKA_PRODUCER, *conf);
  if (!handle.ok()) {
    init_status_ = handle.status();
    return;
  }
  handle_ = std::move(*handle);
}

RdKafkaProducer::~RdKafkaProducer() { Close(); }

void RdKafkaProducer::DeliveryCallback(rd_kafka_t* /*rk*/, const rd_kafka_message_t* message,
                                       void* opaque) {
  auto* self = static_cast<RdKafkaProducer*>(opaque);
  const TopicPartition tp{rd_kafka_topic_name(message->rkt), message->partition};
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (self->delivery_error_.ok()) {
      self->delivery_error_ = ToStatus(message->err, fmt::format("delivery to {}", tp.ToString()));
    }
    return;
  }
  int64_t& last = self->acked_.try_emplace(tp, message->offset).first->second;
  last = std::max(last, message->offset);
}

absl::Status RdKafkaProducer::Enter(std::string_view call) const {
  if (closed_) return ClosedError(call);
  if (!init_status_.ok()) return init_status_;
  // A fatal error of an idempotent producer (fenced, sequence lost) is final, like a fence.
  return FatalError(handle_.get(), call);
}

absl::Status RdKafkaProducer::Send(const TopicPartition& partition, std::string key,
                                   std::optional<std::string> value, int64_t timestamp_ms) {
  if (absl::Status s = Enter("producer.send"); !s.ok()) return s;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int attempt = 0; attempt <= kQueueFullWaitsMax; ++attempt) {
    err = rd_kafka_producev(
        handle_.get(), RD_KAFKA_V_TOPIC(partition.topic.c_str()),
        RD_KAFKA_V_PARTITION(partition.partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(value.has_value() ? value->data() : nullptr,
                         value.has_value() ? value->size() : 0),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || attempt == kQueueFullWaitsMax) break;
    rd_kafka_poll(handle_.get(), kQueueFullWaitMs);  // delivery reports make room
  }
  rd_kafka_poll(handle_.get(), 0);  // serve delivery reports as we go
  return ToStatus(err, fmt::format("send to {}", partition.ToString()));
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaProducer::Flush(TimeNs timeout_ns) {
  if (absl::Status s = Enter("producer.flush"); !s.ok()) return s;
  if (timeout_ns < 0) return absl::InvalidArgumentError("flush: negative timeout");
  const rd_kafka_resp_err_t err = rd_kafka_flush(handle_.get(), TimeoutMs(timeout_ns));
  // Timed out: what was acknowledged so far stays for the next Flush, which waits on.
  if (absl::Status s = ToStatus(err, "flush"); !s.ok()) return s;
  if (!delivery_error_.ok()) {
    // The failed records are gone (librdkafka gave up after message.timeout.ms); the offsets
    // acknowledged meanwhile are reported by the next Flush.
    absl::Status failed = delivery_error_;
    delivery_error_ = absl::OkStatus();
    return failed;
  }
  std::map<TopicPartition, int64_t> acked;
  acked.swap(acked_);
  return acked;
}

void RdKafkaProducer::Close() {
  if (closed_) return;
  closed_ = true;
  if (handle_ == nullptr) return;
  (void)rd_kafka_flush(handle_.get(), kCloseFlushMs);
  handle_.reset();
}

}  // namespace restoresim::rdkafka
