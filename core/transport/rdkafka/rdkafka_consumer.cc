#include "core/transport/rdkafka/rdkafka_consumer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/util/check.h"

namespace restoresim::rdkafka {

ConsumerCore::ConsumerCore(rd_kafka_t* rk, Mode mode, const ConsumerConfig& config,
                           const RdKafkaOptions& options, Clock& clock)
    : rk_(rk), mode_(mode), config_(config), options_(options), clock_(clock) {
  // Errors and rebalances come through the consumer queue too, so one batch call serves all.
  rd_kafka_poll_set_consumer(rk_);
  queue_ = rd_kafka_queue_get_consumer(rk_);
  RS_CHECK(queue_ != nullptr, "a consumer handle without a consumer queue");
}

ConsumerCore::~ConsumerCore() { rd_kafka_queue_destroy(queue_); }

absl::StatusOr<int64_t> ConsumerCore::Position(const TopicPartition& partition) {
  if (absl::Status s = CheckAssigned(partition, "position"); !s.ok()) return s;
  PartitionState& state = At(partition);
  if (absl::Status s = Resolve(partition, state); !s.ok()) return s;
  return *state.position;
}

absl::Status ConsumerCore::Resolve(const TopicPartition& partition, PartitionState& state) {
  if (!state.pending_seek.has_value() && state.position.has_value()) return absl::OkStatus();
  OffsetReset where = state.pending_seek.value_or(config_.auto_offset_reset);
  if (!state.pending_seek.has_value() && mode_ != Mode::kNoGroup) {
    ListPtr list = ToList({partition});
    rd_kafka_resp_err_t err =
        rd_kafka_committed(rk_, list.get(), TimeoutMs(options_.request_timeout_ns));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = list->elems[0].err;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ToStatus(err, fmt::format("committed offset of {}", partition.ToString()));
    }
    if (list->elems[0].offset >= 0) {
      state.position = list->elems[0].offset;  // where librdkafka starts too
      return absl::OkStatus();
    }
  }
  if (where == OffsetReset::kNone) {
    return NoPositionError(partition);
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> marks =
      Watermarks(rk_, partition, options_.request_timeout_ns);
  if (!marks.ok()) return marks.status();
  state.position = where == OffsetReset::kEarliest ? marks->first : marks->second;
  state.pending_seek.reset();
  state.extra.needs_seek = true;
  return absl::OkStatus();
}

absl::Status ConsumerCore::SeekLib(
    const std::vector<std::pair<TopicPartition, int64_t>>& offsets) {
  if (offsets.empty()) return absl::OkStatus();
  ListPtr list = ToList(offsets);
  rd_kafka_error_t* error =
      rd_kafka_seek_partitions(rk_, list.get(), TimeoutMs(options_.request_timeout_ns));
  if (absl::Status s = ToStatus(error, "seek"); !s.ok()) return s;
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ToStatus(list->elems[i].err,
                      fmt::format("seek of {}", PartitionOf(list->elems[i]).ToString()));
    }
    At(PartitionOf(list->elems[i])).extra.needs_seek = false;
  }
  return absl::OkStatus();
}

absl::Status ConsumerCore::Sync() { return mode_ == Mode::kGroup ? SyncGroup() : SyncNoGroup(); }

absl::Status ConsumerCore::UnassignLib(const std::vector<TopicPartition>& partitions) {
  if (partitions.empty()) return absl::OkStatus();
  ListPtr list = ToList(partitions);
  return ToStatus(rd_kafka_incremental_unassign(rk_, list.get()), "unassign");
}

absl::Status ConsumerCore::AssignLib(
    const std::vector<std::pair<TopicPartition, int64_t>>& offsets) {
  if (offsets.empty()) return absl::OkStatus();
  ListPtr list = ToList(offsets);
  if (absl::Status s = ToStatus(rd_kafka_incremental_assign(rk_, list.get()), "assign"); !s.ok()) {
    return s;
  }
  for (const auto& [tp, offset] : offsets) {
    At(tp).extra.needs_seek = false;
    lib_broken_.erase(tp);
  }
  return absl::OkStatus();
}

absl::Status ConsumerCore::SyncNoGroup() {
  std::set<TopicPartition> wanted;
  std::vector<std::pair<TopicPartition, int64_t>> to_assign;
  std::vector<std::pair<TopicPartition, int64_t>> to_seek;
  for (auto& [tp, state] : partitions()) {
    if (state.paused || state.extra.out_of_range) continue;
    if (absl::Status s = Resolve(tp, state); !s.ok()) return s;
    const bool broken = lib_broken_.contains(tp);
    if (!broken) wanted.insert(tp);
    if (!lib_assigned_.contains(tp) || broken) {
      to_assign.emplace_back(tp, *state.position);
    } else if (state.extra.needs_seek) {
      to_seek.emplace_back(tp, *state.position);
    }
  }
  std::vector<TopicPartition> to_unassign;
  for (const TopicPartition& tp : lib_assigned_) {
    if (!wanted.contains(tp)) to_unassign.push_back(tp);
  }
  if (absl::Status s = UnassignLib(to_unassign); !s.ok()) return s;
  for (const TopicPartition& tp : to_unassign) lib_assigned_.erase(tp);
  if (absl::Status s = AssignLib(to_assign); !s.ok()) return s;
  for (const auto& [tp, offset] : to_assign) lib_assigned_.insert(tp);
  return SeekLib(to_seek);
}

absl::Status ConsumerCore::Reassign() {
  std::vector<TopicPartition> partitions;
  std::vector<std::pair<TopicPartition, int64_t>> offsets;
  for (auto& [tp, state] : this->partitions()) {
    if (!lib_broken_.contains(tp) || state.extra.out_of_range) continue;
    if (!state.position.has_value()) continue;
    partitions.push_back(tp);
    offsets.emplace_back(tp, *state.position);
    state.extra.lib_paused = false;  // a new assignment starts unpaused
  }
  if (absl::Status s = UnassignLib(partitions); !s.ok()) return s;
  return AssignLib(offsets);
}

absl::Status ConsumerCore::SyncGroup() {
  std::vector<TopicPartition> to_pause;
  std::vector<TopicPartition> to_resume;
  std::vector<std::pair<TopicPartition, int64_t>> to_seek;
  for (auto& [tp, state] : partitions()) {
    if (state.paused != state.extra.lib_paused) (state.paused ? to_pause : to_resume).push_back(tp);
    if (state.pending_seek.has_value()) {
      if (absl::Status s = Resolve(tp, state); !s.ok()) return s;
    }
    if (!state.paused && !lib_broken_.contains(tp) && state.extra.needs_seek &&
        state.position.has_value()) {
      to_seek.emplace_back(tp, *state.position);
    }
  }
  if (absl::Status s = Reassign(); !s.ok()) return s;
  for (bool pause : {true, false}) {
    std::vector<TopicPartition>& partitions = pause ? to_pause : to_resume;
    if (partitions.empty()) continue;
    ListPtr list = ToList(partitions);
    const rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(rk_, list.get())
                                          : rd_kafka_resume_partitions(rk_, list.get());
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, pause ? "pause" : "resume");
    for (const TopicPartition& tp : partitions) At(tp).extra.lib_paused = pause;
  }
  return SeekLib(to_seek);
}

void ConsumerCore::Locate(const rd_kafka_message_t* message, TakeCursor& cursor) {
  if (message->rkt == nullptr) {
    cursor = TakeCursor();
    return;
  }
  if (cursor.topic == message->rkt && cursor.tp->partition == message->partition) return;
  cursor.topic = message->rkt;
  cursor.tp = TopicPartition{rd_kafka_topic_name(message->rkt), message->partition};
  Map& partitions = this->partitions();
  auto it = partitions.find(*cursor.tp);
  cursor.state = it == partitions.end() ? nullptr : &it->second;
  cursor.batch = nullptr;
  RS_CHECK(cursor.tp.has_value() && cursor.topic != nullptr);
}

void ConsumerCore::Take(rd_kafka_message_t* message,
                        std::map<TopicPartition, PartitionRecords>& records,
                        std::set<TopicPartition>& out_of_range, absl::Status& error,
                        size_t& count, TakeCursor& cursor) {
  Locate(message, cursor);
  const std::optional<TopicPartition>& tp = cursor.tp;
  PartitionState* state = cursor.state;
  const bool fetching = state != nullptr && !state->paused && !state->extra.out_of_range &&
                        !state->extra.needs_seek;
  if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    // The fetcher reached the end (the LSO under read_committed) at message->offset, past any
    // control records and skipped aborted records after the last message: the port's position
    // passes them too (Kafka's consumer position does). Never backwards.
    if (fetching && state->position.has_value() && message->offset > *state->position) {
      state->position = message->offset;
    }
  } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const absl::Status status = ToStatus(message->err, rd_kafka_message_errstr(message));
    if (status.code() == absl::StatusCode::kOutOfRange && tp.has_value()) {
      if (fetching) {
        state->extra.out_of_range = true;
        lib_broken_.insert(*tp);
        out_of_range.insert(*tp);
      }
    } else if (error.ok()) {
      error = status;
    }
  } else if (!fetching) {
    // Dropped (paused, or a seek is pending). A group member's partition that had no position
    // yet starts here: librdkafka began at the committed offset, so Resume seeks back to it
    // instead of losing this record.
    if (state != nullptr && !state->position.has_value()) {
      state->position = message->offset;
      state->extra.needs_seek = true;
    }
  } else if (!state->position.has_value() || message->offset >= *state->position) {
    if (cursor.batch == nullptr) {
      cursor.batch = &records[*tp];
      cursor.batch->partition = *tp;
    }
    ConsumerRecord& r = cursor.batch->records.emplace_back();
    r.offset = message->offset;
    if (message->key != nullptr) {
      r.key.assign(static_cast<const char*>(message->key), message->key_len);
    }
    if (message->payload != nullptr) {
      r.value.emplace(static_cast<const char*>(message->payload), message->len);
    }
    r.timestamp_ms = rd_kafka_message_timestamp(message, nullptr);
    state->position = message->offset + 1;
    ++count;
  }
  rd_kafka_message_destroy(message);
}

absl::StatusOr<PollResult> ConsumerCore::Poll(TimeNs timeout_ns, const bool* interrupted) {
  if (timeout_ns < 0) return absl::InvalidArgumentError("poll: negative timeout");
  if (config_.max_poll_records < 1) {
    return absl::InvalidArgumentError(fmt::format("consumer {}: max_poll_records {} < 1",
                                                  config_.client_id, config_.max_poll_records));
  }
  const TimeNs deadline_ns = DeadlineAfter(clock_.NowNs(), timeout_ns);
  std::map<TopicPartition, PartitionRecords> records;
  std::set<TopicPartition> out_of_range;
  absl::Status error;
  size_t count = 0;
  const size_t want = static_cast<size_t>(config_.max_poll_records);
  std::array<rd_kafka_message_t*, kBatchMessagesMax> batch;
  for (;;) {
    if (absl::Status s = Sync(); !s.ok()) return s;
    const TimeNs now_ns = clock_.NowNs();
    const int wait_ms = TimeoutMs(deadline_ns > now_ns ? deadline_ns - now_ns : 0);
    // The first message waits; the rest are what is queued already (a batch call waits until
    // its batch is full or the timeout passes, so one call would sit out partial batches).
    ssize_t n = rd_kafka_consume_batch_queue(queue_, wait_ms, batch.data(), 1);
    if (n == 1 && want - count > 1) {
      const ssize_t more = rd_kafka_consume_batch_queue(
          queue_, 0, batch.data() + 1, std::min(kBatchMessagesMax, want - count) - 1);
      if (more > 0) n += more;
    }
    TakeCursor cursor;  // Sync above may have changed the assignment
    for (ssize_t i = 0; i < std::max<ssize_t>(n, 0); ++i) {
      Take(batch[static_cast<size_t>(i)], records, out_of_range, error, count, cursor);
    }
    if (interrupted != nullptr && *interrupted) break;
    if (count > 0 || !out_of_range.empty() || clock_.NowNs() >= deadline_ns) break;
    if (!error.ok()) return error;  // nothing else came: the failure is the answer
  }
  PollResult result;
  for (auto& [tp, batch_records] : records) result.partitions.push_back(std::move(batch_records));
  result.out_of_range.assign(out_of_range.begin(), out_of_range.end());
  return result;
}

absl::Status ConsumerCore::CheckCommit(const std::map<TopicPartition, int64_t>& offsets,
                                       const std::string& member_id) const {
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("commit: negative offset {} for {}", offset, tp.ToString()));
    }
    if (!IsAssigned(tp)) {
      return absl::FailedPreconditionError(fmt::format(
          "commit: not owner: {} is not assigned to member {}", tp.ToString(), member_id));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> ConsumerCore::Committed(
    const std::vector<TopicPartition>& partitions) {
  ListPtr list = ToList(partitions);
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(rk_, list.get(), TimeoutMs(options_.request_timeout_ns));
  if (absl::Status s = ToStatus(err, "committed"); !s.ok()) return s;
  std::map<TopicPartition, int64_t> out;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& e = list->elems[i];
    if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ToStatus(e.err, fmt::format("committed offset of {}", PartitionOf(e).ToString()));
    }
    if (e.offset >= 0) out[PartitionOf(e)] = e.offset;
  }
  return out;
}

void ConsumerCore::UnassignAll() {
  if (mode_ == Mode::kGroup || lib_assigned_.empty()) return;
  ListPtr list = ToList(std::vector<TopicPartition>(lib_assigned_.begin(), lib_assigned_.end()));
  (void)ToStatus(rd_kafka_incremental_unassign(rk_, list.get()), "unassign");
  lib_assigned_.clear();
}

}  // namespace restoresim::rdkafka
