// Fetcher: the consumer side of a fake consumer — its SubscriptionState (assignment, positions,
// pause flags, pending seeks to the beginning or end: core/transport/subscription_state.h, the
// same type librdkafka's adapter keeps) and the fetch itself, shared by the restore consumer and
// the main consumer.
//
// Positions follow Kafka: a partition without one takes the group's committed offset (main
// consumer), else auto_offset_reset; SeekToBeginning/SeekToEnd are resolved lazily, at the
// next Position or poll. A position outside [log start, end] is reported out of range (reset
// kNone) or reset (kEarliest/kLatest). Under read_committed a fetch reads up to the last stable
// offset and skips aborted records; SeekToEnd and a kLatest reset go to the LSO. Control
// records are never returned and positions move past them. Polls rotate the partition they
// start with, so that max_poll_records does not starve the last partitions.
//
// Thread-safety: owned by one consumer and used by its thread; methods that read the logs
// need the broker's mutex.
#ifndef RESTORESIM_FAKES_FAKE_FETCHER_H_
#define RESTORESIM_FAKES_FAKE_FETCHER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/transport/subscription_state.h"
#include "core/transport/transport.h"
#include "fakes/fake_broker.h"

namespace restoresim::fakes {

// What the fetcher keeps per partition beside the consumer's state: the partition's log, found
// at the first fetch and kept (topics are never deleted and their logs never move), so that a
// poll does not look each partition up again.
struct FetchPartitionExtra : NoPartitionExtra {
  const PartitionLog* log = nullptr;
};

class Fetcher : private SubscriptionState<FetchPartitionExtra> {
 public:
  // A poll that keeps being interrupted (rebalances) gives up after this many rounds.
  static constexpr int kPollRoundsMax = 64;

  using State = SubscriptionState<FetchPartitionExtra>;

  Fetcher(FakeBroker& broker, const ConsumerConfig& config);

  // For a main consumer: positions start from `group`'s committed offsets, and a poll stops
  // waiting when `member_id` has rebalance events to deliver.
  void JoinedGroup(std::string group, std::string member_id);

  // The consumer's client-side state, as Kafka's SubscriptionState keeps it: SetAssignment
  // keeps position, pause flag and pending seek of the partitions that stay.
  using State::SetAssignment;
  using State::Add;
  using State::Remove;
  using State::Clear;
  using State::IsAssigned;
  using State::Assignment;
  using State::Paused;
  using State::Seek;
  using State::SeekTo;  // kEarliest (SeekToBeginning) or kLatest (SeekToEnd)
  using State::SetPaused;
  absl::StatusOr<int64_t> Position(const TopicPartition& partition)
      ABSL_LOCKS_EXCLUDED(broker_.mu_);

  // Fetches until records or an out-of-range report arrive, or an error, or `deadline_ns`, or
  // (main consumer) pending rebalance events: then it returns what it has, possibly nothing.
  absl::StatusOr<PollResult> FetchUntil(TimeNs deadline_ns) ABSL_LOCKS_EXCLUDED(broker_.mu_);

 private:
  using PartitionState = State::Partition;
  // A partition a fetch may read from.
  struct Fetchable {
    const TopicPartition* partition;
    PartitionState* state;
    const PartitionLog* log;
  };

  // Gives `state` a position if it has none or a seek is pending.
  absl::Status Resolve(const TopicPartition& partition, PartitionState& state,
                       const PartitionLog& log) ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  absl::StatusOr<PollResult> FetchOnce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // Replaces `fetchable` with the unpaused partitions in range, after resets; out-of-range
  // ones go to `result`.
  absl::Status Candidates(PollResult& result, std::vector<Fetchable>& fetchable)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // The log of `partition`, found once (see FetchPartitionExtra).
  const PartitionLog& LogOf(const TopicPartition& partition, PartitionState& state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // The group's coordinator, found once (groups are never removed). REQUIRES: a group.
  GroupCoordinator& Group() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  // Reads up to `budget` records from `fetchable`, starting at the rotation point.
  void Read(const std::vector<Fetchable>& fetchable, int64_t budget, PollResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  bool Interrupted() ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);
  bool read_committed() const {
    return config_.isolation_level == IsolationLevel::kReadCommitted;
  }
  // Where this consumer's reads end: the LSO under read_committed, else the end offset.
  int64_t EndOf(const PartitionLog& log) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(broker_.mu_);

  FakeBroker& broker_;
  const ConsumerConfig config_;
  std::string group_;  // empty: no group (restore consumer)
  GroupCoordinator* group_coordinator_ = nullptr;  // group_'s, once Group() has found it
  std::string member_id_;
  // FetchOnce's candidates, kept so that a poll allocates nothing for them once grown. Only
  // valid during a FetchOnce (they point into the subscription state).
  std::vector<Fetchable> fetchable_;
  uint64_t rotation_ = 0;  // which fetchable partition the next fetch starts with
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_FETCHER_H_
