// StreamsProducer (Kafka Streams' StreamsProducer): a stream thread's one producer, and under
// exactly_once_v2 the thread's one transaction.
//
// At least once it is a plain Producer and nothing else happens here. Under exactly_once_v2 it
// is a TransactionalProducer with transactional.id "<application.id>-<thread name>" (one per
// stream thread, as EOS v2 has it), and it keeps Kafka's transaction rules:
//   * InitTransactions once, before the first transaction — eagerly, when the thread first
//     initialises an active task (Kafka's RecordCollectorImpl.initialize), so that a
//     transaction the id left open (a crashed predecessor) is aborted before this thread
//     restores the changelogs it blocks;
//   * a transaction begins lazily, before the first record of a commit interval
//     (MaybeBeginTransaction, Kafka's maybeBeginTransaction);
//   * a commit sends the input offsets with the main consumer's group metadata into the
//     transaction and commits it (Kafka's commitTransaction): records and offsets, all or none;
//   * a transaction that cannot commit is aborted (AbortTransaction); a fenced producer (kAborted:
//     fenced, invalid epoch, timed out) is closed and replaced by a new one that initialises
//     again (Kafka's reInitializeThreadProducer after a TaskMigratedException).
//
// Thread-safety: its stream thread only.
#ifndef RESTORESIM_CORE_RUNTIME_STREAMS_PRODUCER_H_
#define RESTORESIM_CORE_RUNTIME_STREAMS_PRODUCER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim {

struct StreamsProducerConfig {
  std::string client_id;
  bool exactly_once = false;
  std::string transactional_id;  // exactly_once only
  // Kafka Streams sets transaction.timeout.ms to 10 s under exactly_once_v2.
  TimeNs transaction_timeout_ns = 10 * kSecond;
  TimeNs request_timeout_ns = 30 * kSecond;
};

class StreamsProducer {
 public:
  StreamsProducer(Transport& transport, StreamsProducerConfig config);
  ~StreamsProducer();

  bool exactly_once() const { return config_.exactly_once; }
  // The producer records are sent on (the current one: a reset replaces it).
  Producer& producer() { return config_.exactly_once ? *txn_ : *plain_; }
  const std::string& client_id() const { return config_.client_id; }

  // ---- exactly_once only ----
  // InitTransactions unless done (a retryable failure is retried at the next call).
  [[nodiscard]] absl::Status InitTransactionIfNeeded();
  // Begins a transaction unless one is in flight (initialising first).
  [[nodiscard]] absl::Status MaybeBeginTransaction();
  bool transaction_in_flight() const { return in_flight_; }
  // Sends `offsets` with `group` into the transaction (beginning one if needed) and commits it.
  // A retryable failure leaves the transaction open for the next attempt.
  [[nodiscard]] absl::Status CommitTransaction(const std::map<TopicPartition, int64_t>& offsets,
                                               const ConsumerGroupMetadata& group);
  // Ends the open transaction without committing it: AbortTransaction on a usable producer;
  // a fenced one (or one whose abort fails) is replaced by a new, initialised producer (its
  // InitTransactions aborts the transaction on the broker). OK when nothing was in flight.
  [[nodiscard]] absl::Status AbortOrReset();
  // Closes the producer and makes a new one, initialised eagerly.
  [[nodiscard]] absl::Status Reset();
  int64_t resets() const { return resets_; }

  void Close();

 private:
  std::unique_ptr<TransactionalProducer> NewTransactional();

  Transport& transport_;
  const StreamsProducerConfig config_;
  std::unique_ptr<Producer> plain_;                // at least once
  std::unique_ptr<TransactionalProducer> txn_;     // exactly_once_v2
  bool initialized_ = false;
  bool in_flight_ = false;
  int64_t resets_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_STREAMS_PRODUCER_H_
