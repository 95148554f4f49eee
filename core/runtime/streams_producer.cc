#include "core/runtime/streams_producer.h"

#include <fmt/format.h>

#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim {

StreamsProducer::StreamsProducer(Transport& transport, StreamsProducerConfig config)
    : transport_(transport), config_(std::move(config)) {
  if (config_.exactly_once) {
    RS_CHECK(!config_.transactional_id.empty(), "producer {}: exactly_once without a "
             "transactional.id", config_.client_id);
    txn_ = NewTransactional();
  } else {
    plain_ = transport_.NewProducer(config_.client_id);
  }
}

StreamsProducer::~StreamsProducer() = default;

std::unique_ptr<TransactionalProducer> StreamsProducer::NewTransactional() {
  return transport_.NewTransactionalProducer(
      {.client_id = config_.client_id,
       .transactional_id = config_.transactional_id,
       .transaction_timeout_ns = config_.transaction_timeout_ns});
}

absl::Status StreamsProducer::InitTransactionIfNeeded() {
  RS_CHECK(config_.exactly_once, "producer {}: transactions under at least once",
           config_.client_id);
  if (initialized_) return absl::OkStatus();
  absl::Status s = txn_->InitTransactions(config_.request_timeout_ns);
  if (s.ok()) {
    initialized_ = true;
    TraceMark("eos", fmt::format("{} initialised {}", config_.client_id,
                                 config_.transactional_id));
  }
  return s;
}

absl::Status StreamsProducer::MaybeBeginTransaction() {
  if (in_flight_) return absl::OkStatus();
  if (absl::Status s = InitTransactionIfNeeded(); !s.ok()) return s;
  if (absl::Status s = txn_->BeginTransaction(); !s.ok()) return s;
  in_flight_ = true;
  return absl::OkStatus();
}

absl::Status StreamsProducer::CommitTransaction(
    const std::map<TopicPartition, int64_t>& offsets, const ConsumerGroupMetadata& group) {
  RS_CHECK(config_.exactly_once, "producer {}: a transaction under at least once",
           config_.client_id);
  if (!in_flight_ && offsets.empty()) return absl::OkStatus();  // nothing to commit
  if (absl::Status s = MaybeBeginTransaction(); !s.ok()) return s;
  if (!offsets.empty()) {
    if (absl::Status s = txn_->SendOffsetsToTransaction(offsets, group); !s.ok()) return s;
  }
  if (absl::Status s = txn_->CommitTransaction(config_.request_timeout_ns); !s.ok()) return s;
  in_flight_ = false;
  TraceMark("cover", "eos transaction committed");
  return absl::OkStatus();
}

absl::Status StreamsProducer::AbortOrReset() {
  RS_CHECK(config_.exactly_once);
  if (!in_flight_) return absl::OkStatus();
  absl::Status s = txn_->AbortTransaction(config_.request_timeout_ns);
  if (s.ok()) {
    in_flight_ = false;
    TraceMark("cover", "eos transaction aborted");
    return s;
  }
  // Fenced, or the abort itself failed: a new producer's InitTransactions aborts it.
  return Reset();
}

absl::Status StreamsProducer::Reset() {
  RS_CHECK(config_.exactly_once);
  txn_->Close();
  txn_ = NewTransactional();
  initialized_ = false;
  in_flight_ = false;
  ++resets_;
  TraceMark("eos", "producer re-initialised");
  // Eagerly: the transaction the old producer left open blocks read_committed restoration of
  // this thread's own changelogs until it is aborted. A failure is retried before the next
  // transaction.
  return InitTransactionIfNeeded();
}

void StreamsProducer::Close() {
  if (config_.exactly_once) {
    txn_->Close();
  } else {
    plain_->Close();
  }
  in_flight_ = false;
}

}  // namespace restoresim
