// The fake broker's transaction coordinator (Kafka's TransactionCoordinator, paraphrased):
// producer ids and epochs per transactional.id, fencing, markers, transactional offsets and
// the lazy transaction time-out. The model is stated in fake_broker.h and
// fake_transactional_producer.h.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_broker.h"
#include "fakes/fake_transactional_producer.h"

namespace restoresim::fakes {

// ---- scenario controls ----

absl::StatusOr<int64_t> FakeBroker::LastStableOffset(const TopicPartition& partition) {
  MutexLock lock(mu_);
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  ExpireTransactionsLocked();
  return Log(partition).last_stable_offset();
}

std::optional<FakeBroker::TransactionInfo> FakeBroker::Transaction(
    const std::string& transactional_id) {
  MutexLock lock(mu_);
  ExpireTransactionsLocked();
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end()) return std::nullopt;
  const TransactionState& state = it->second;
  return TransactionInfo{state.producer_id, state.epoch, state.ongoing,
                         {state.partitions.begin(), state.partitions.end()},
                         state.aborted_by_timeout};
}

absl::Status FakeBroker::FenceTransactionalId(const std::string& transactional_id) {
  MutexLock lock(mu_);
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end()) {
    return absl::NotFoundError(fmt::format("unknown transactional id {}", transactional_id));
  }
  BumpEpochLocked(transactional_id, it->second, "fenced by a newer producer of the id (scripted)");
  return absl::OkStatus();
}

std::unique_ptr<TransactionalProducer> FakeBroker::NewTransactionalProducer(
    const TransactionalProducerConfig& config) {
  TransportPoint(config.client_id, "transport.new_transactional_producer");
  return std::make_unique<FakeTransactionalProducer>(*this, config);
}

// ---- the coordinator ----

FakeBroker::TransactionState& FakeBroker::InitProducerIdLocked(
    const std::string& transactional_id, TimeNs timeout_ns) {
  ExpireTransactionsLocked();
  auto [it, created] = transactions_.try_emplace(transactional_id);
  TransactionState& state = it->second;
  if (created) {
    state.producer_id = next_producer_id_++;
    state.epoch = 0;
    TraceMark("transaction", fmt::format("init {} pid {}", transactional_id, state.producer_id));
  } else {
    BumpEpochLocked(transactional_id, state, "fenced by a newer producer of the id");
  }
  state.timeout_ns = timeout_ns;
  RS_CHECK_GE(state.producer_id, 0);
  RS_CHECK(!state.ongoing, "a new epoch starts with no open transaction");
  return state;
}

absl::Status FakeBroker::CheckProducerLocked(const std::string& transactional_id,
                                             int64_t producer_id, int32_t epoch) {
  ExpireTransactionsLocked();
  auto it = transactions_.find(transactional_id);
  RS_CHECK(it != transactions_.end(), "a producer of {} that never initialised", transactional_id);
  const TransactionState& state = it->second;
  if (state.producer_id == producer_id && state.epoch == epoch) return absl::OkStatus();
  RS_CHECK_LT(epoch, state.epoch, "epochs only go up");
  return absl::AbortedError(fmt::format(
      "producer fenced: transactional id {} producer {} epoch {} is older than epoch {} ({})",
      transactional_id, producer_id, epoch, state.epoch, state.fenced_why));
}

void FakeBroker::BumpEpochLocked(const std::string& transactional_id, TransactionState& state,
                                 std::string why) {
  if (state.ongoing) EndTransactionLocked(transactional_id, state, /*commit=*/false);
  ++state.epoch;
  state.fenced_why = std::move(why);
  TraceMark("transaction", fmt::format("fence {} epoch {}: {}", transactional_id, state.epoch,
                                       state.fenced_why));
  RS_CHECK(!state.ongoing);
}

void FakeBroker::StartTransactionLocked(TransactionState& state) {
  if (state.ongoing) return;
  state.ongoing = true;
  state.started_ns = clock_.NowNs();
  RS_CHECK(state.partitions.empty() && state.offsets.empty());
}

absl::StatusOr<int64_t> FakeBroker::AppendTransactionalLocked(
    TransactionState& state, const TopicPartition& partition, std::string_view key,
    std::optional<std::string_view> value, int64_t timestamp_ms) {
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  StartTransactionLocked(state);
  absl::StatusOr<int64_t> offset =
      Log(partition).AppendTransactional(state.producer_id, key, value, timestamp_ms);
  if (!offset.ok()) return offset;
  state.partitions.insert(partition);
  changed_.NotifyAll();
  if (append_observer_) {
    ConsumerRecord r{.offset = *offset, .key = std::string(key), .timestamp_ms = timestamp_ms};
    if (value.has_value()) r.value = std::string(*value);
    append_observer_(partition, r);
  }
  return offset;
}

void FakeBroker::EndTransactionLocked(const std::string& transactional_id,
                                      TransactionState& state, bool commit) {
  RS_CHECK(state.ongoing, "no open transaction of {} to end", transactional_id);
  const int64_t now_ms = clock_.NowNs() / kMillisecond;
  for (const TopicPartition& tp : state.partitions) {
    PartitionLog& log = Log(tp);
    RS_CHECK(log.HasOpenTransaction(state.producer_id), "{} lost its open transaction",
             tp.ToString());
    std::vector<std::pair<int64_t, int64_t>> aborted;
    const int64_t marker = log.WriteMarker(state.producer_id, commit, now_ms, &aborted);
    if (abort_observer_) {
      for (const auto& [first, end] : aborted) abort_observer_(tp, first, end);
    }
    TraceMark("transaction", fmt::format("{} marker {}@{}", commit ? "commit" : "abort",
                                         tp.ToString(), marker));
  }
  if (commit) {
    for (const auto& [group, offsets] : state.offsets) {
      for (const auto& [tp, offset] : offsets) Group(group).committed()[tp] = offset;
    }
  }
  TraceMark("transaction", fmt::format("{} {} pid {} epoch {}", commit ? "commit" : "abort",
                                       transactional_id, state.producer_id, state.epoch));
  state.partitions.clear();
  state.offsets.clear();
  state.ongoing = false;
  changed_.NotifyAll();
}

void FakeBroker::ExpireTransactionsLocked() {
  if (transactions_.empty()) return;  // no transactions: nothing to do, nothing traced
  const TimeNs now_ns = clock_.NowNs();
  for (auto& [transactional_id, state] : transactions_) {
    if (!state.ongoing || now_ns - state.started_ns < state.timeout_ns) continue;
    ++state.aborted_by_timeout;
    BumpEpochLocked(transactional_id, state,
                    fmt::format("transaction timed out after {} ms (transaction.timeout.ms)",
                                state.timeout_ns / kMillisecond));
  }
}

}  // namespace restoresim::fakes
