// SubscriptionState: a consumer's client-side view of its partitions — the assignment, each
// partition's position, a pending seek to the beginning or end, the pause flag — after Kafka's
// consumer `SubscriptionState` (org.apache.kafka.clients.consumer.internals). Both consumers of
// the port keep it here, the fake broker's (fakes/fake_fetcher.h) and librdkafka's adapter
// (core/transport/rdkafka/rdkafka_consumer.h), so they agree by construction on what the port
// promises: which calls need the partition assigned, which errors they return, in what order
// they check, and what an assignment keeps. Each backend resolves positions itself (the fake
// reads its logs; the adapter asks the broker), from the same starting point: a pending seek
// first, then a position, then (a group member) the committed offset, then auto_offset_reset,
// else NoPositionError.
//
// `Extra` holds a backend's own per-partition flags; a seek and a resume tell it through
// Extra::OnSeek(), Extra::OnSeekTo() and Extra::OnResume(bool had_position). The fake keeps no
// flags there, only the partition's log once found (fakes/fake_fetcher.h, FetchPartitionExtra).
//
// Thread-safety: none; owned by one consumer and used by its thread.
#ifndef RESTORESIM_CORE_TRANSPORT_SUBSCRIPTION_STATE_H_
#define RESTORESIM_CORE_TRANSPORT_SUBSCRIPTION_STATE_H_

#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/transport/transport.h"
#include "core/util/check.h"

namespace restoresim {

// The port's errors for the client-side calls, one spelling for every backend.
absl::Status NotAssignedError(const TopicPartition& partition, std::string_view call);
absl::Status NegativeSeekError(const TopicPartition& partition, int64_t offset);
absl::Status NoPositionError(const TopicPartition& partition);

struct NoPartitionExtra {
  void OnSeek() {}
  void OnSeekTo() {}
  void OnResume(bool /*had_position*/) {}
};

template <typename Extra = NoPartitionExtra>
class SubscriptionState {
 public:
  struct Partition {
    std::optional<int64_t> position;
    std::optional<OffsetReset> pending_seek;  // kEarliest or kLatest, resolved lazily
    bool paused = false;
    Extra extra;
  };
  using Map = std::map<TopicPartition, Partition>;

  // Replaces the assignment; partitions that stay keep their state, new ones start empty.
  void SetAssignment(const std::vector<TopicPartition>& partitions) {
    Map next;
    for (const TopicPartition& tp : partitions) {
      auto it = partitions_.find(tp);
      next[tp] = it == partitions_.end() ? Partition{} : std::move(it->second);
    }
    partitions_ = std::move(next);
  }
  void Add(const std::vector<TopicPartition>& partitions) {
    for (const TopicPartition& tp : partitions) partitions_.try_emplace(tp);
  }
  void Remove(const std::vector<TopicPartition>& partitions) {
    for (const TopicPartition& tp : partitions) partitions_.erase(tp);
  }
  void Clear() { partitions_.clear(); }
  bool IsAssigned(const TopicPartition& tp) const { return partitions_.contains(tp); }
  std::vector<TopicPartition> Assignment() const;
  std::vector<TopicPartition> Paused() const;

  absl::Status CheckAssigned(const TopicPartition& tp, std::string_view call) const {
    return partitions_.contains(tp) ? absl::OkStatus() : NotAssignedError(tp, call);
  }
  // REQUIRES: assigned (CheckAssigned passed).
  Partition& At(const TopicPartition& tp) {
    auto it = partitions_.find(tp);
    RS_CHECK(it != partitions_.end(), "{} is not assigned", tp.ToString());
    return it->second;
  }

  absl::Status Seek(const TopicPartition& tp, int64_t offset);
  // `where`: kEarliest (SeekToBeginning) or kLatest (SeekToEnd). All or nothing.
  absl::Status SeekTo(const std::vector<TopicPartition>& partitions, OffsetReset where);
  // All or nothing.
  absl::Status SetPaused(const std::vector<TopicPartition>& partitions, bool paused);

  Map& partitions() { return partitions_; }
  const Map& partitions() const { return partitions_; }

 private:
  Map partitions_;
};

template <typename Extra>
std::vector<TopicPartition> SubscriptionState<Extra>::Assignment() const {
  std::vector<TopicPartition> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, state] : partitions_) out.push_back(tp);
  return out;
}

template <typename Extra>
std::vector<TopicPartition> SubscriptionState<Extra>::Paused() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, state] : partitions_) {
    if (state.paused) out.push_back(tp);
  }
  return out;
}

template <typename Extra>
absl::Status SubscriptionState<Extra>::Seek(const TopicPartition& tp, int64_t offset) {
  if (offset < 0) return NegativeSeekError(tp, offset);
  if (absl::Status s = CheckAssigned(tp, "seek"); !s.ok()) return s;
  Partition& state = At(tp);
  state.position = offset;
  state.pending_seek.reset();
  state.extra.OnSeek();
  return absl::OkStatus();
}

template <typename Extra>
absl::Status SubscriptionState<Extra>::SeekTo(const std::vector<TopicPartition>& partitions,
                                              OffsetReset where) {
  RS_CHECK(where != OffsetReset::kNone, "a seek to neither end");
  const char* call = where == OffsetReset::kEarliest ? "seek to beginning" : "seek to end";
  for (const TopicPartition& tp : partitions) {
    if (absl::Status s = CheckAssigned(tp, call); !s.ok()) return s;
  }
  for (const TopicPartition& tp : partitions) {
    Partition& state = At(tp);
    state.pending_seek = where;
    state.extra.OnSeekTo();
  }
  return absl::OkStatus();
}

template <typename Extra>
absl::Status SubscriptionState<Extra>::SetPaused(const std::vector<TopicPartition>& partitions,
                                                 bool paused) {
  for (const TopicPartition& tp : partitions) {
    if (absl::Status s = CheckAssigned(tp, paused ? "pause" : "resume"); !s.ok()) return s;
  }
  for (const TopicPartition& tp : partitions) {
    Partition& state = At(tp);
    if (state.paused && !paused) state.extra.OnResume(state.position.has_value());
    state.paused = paused;
  }
  return absl::OkStatus();
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_SUBSCRIPTION_STATE_H_
