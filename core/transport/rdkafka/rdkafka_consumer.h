// ConsumerCore: what the restore consumer and the main consumer share — the port's view of
// the assignment (positions, pause flags, pending seeks to the beginning or end, partitions
// found out of range), librdkafka's view brought in line with it before every fetch, and the
// batch poll that turns librdkafka messages into a PollResult.
//
// The adapter's position is the truth, as the port states it; librdkafka is told only
// concrete offsets. Why: librdkafka resolves SeekToBeginning/End and its own positions
// asynchronously and reports a position only after a message was consumed, while the port
// promises Position() right after a seek. So SeekToBeginning/End are resolved with a watermark
// query (at the next Position or Poll, lazily, as Kafka does), and a message is accepted only at
// or past the position (earlier ones are left from before a seek).
//
// Three modes. kNoGroup (restore consumer): librdkafka's assignment is the adapter's
// assigned, unpaused, in-range partitions with a position, each assigned at its position
// (incremental assign and unassign; pausing unassigns, resuming assigns at the position again).
// kManualGroup (the main consumer of a streams group, rdkafka_streams_consumer.cc): as kNoGroup,
// but a partition without a position starts at the group's committed offset, as under kGroup.
// kGroup (main consumer): the group decides librdkafka's assignment (rebalance callbacks,
// rdkafka_main_consumer.cc); pause and resume use librdkafka's own, and a resumed partition is
// sought back to its position because librdkafka may have fetched past it while paused.
//
// Thread-safety: one thread at a time, as the port's clients (librdkafka calls the main
// consumer's rebalance callback on that thread, inside Poll).
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CONSUMER_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CONSUMER_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/rdkafka/rdkafka_handle.h"
#include "core/transport/rdkafka/rdkafka_settings.h"
#include "core/transport/subscription_state.h"
#include "core/transport/transport.h"

namespace restoresim::rdkafka {

// The adapter's own flags beside the port's SubscriptionState of each partition.
struct RdKafkaPartitionFlags {
  bool out_of_range = false;  // reported; nothing is fetched until the next seek
  bool needs_seek = false;    // librdkafka's fetch position must be set to `position`
  bool lib_paused = false;    // kGroup: paused in librdkafka

  void OnSeek() {
    out_of_range = false;
    needs_seek = true;
  }
  void OnSeekTo() { out_of_range = false; }
  // Resumed: librdkafka may have fetched (and the adapter dropped) records past the position.
  void OnResume(bool had_position) {
    if (had_position) needs_seek = true;
  }
};

class ConsumerCore : private SubscriptionState<RdKafkaPartitionFlags> {
 public:
  enum class Mode { kNoGroup, kManualGroup, kGroup };
  // Messages taken from librdkafka per batch call (the port's max_poll_records caps a poll).
  static constexpr size_t kBatchMessagesMax = 10000;

  // `rk` is the consumer's handle (kept alive by the caller for the core's lifetime).
  ConsumerCore(rd_kafka_t* rk, Mode mode, const ConsumerConfig& config,
               const RdKafkaOptions& options, Clock& clock);
  ~ConsumerCore();
  ConsumerCore(const ConsumerCore&) = delete;
  ConsumerCore& operator=(const ConsumerCore&) = delete;

  // The port's assignment. SetAssignment keeps the state of partitions that stay.
  using SubscriptionState::SetAssignment;
  using SubscriptionState::Add;
  using SubscriptionState::Remove;
  using SubscriptionState::IsAssigned;
  using SubscriptionState::Assignment;
  using SubscriptionState::Paused;
  using SubscriptionState::Seek;
  using SubscriptionState::SeekTo;  // kEarliest (SeekToBeginning) or kLatest (SeekToEnd)
  using SubscriptionState::SetPaused;
  absl::StatusOr<int64_t> Position(const TopicPartition& partition);

  // Waits up to timeout_ns for records (at most max_poll_records) or out-of-range reports.
  // `interrupted` (may be null) is checked after every librdkafka call: true ends the poll
  // with what it has (a rebalance callback closed the consumer).
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns, const bool* interrupted = nullptr);

  // A main consumer's commit of `offsets`, checked before anything is sent: kInvalidArgument
  // for a negative offset, kFailedPrecondition for a partition not assigned to `member_id`.
  absl::Status CheckCommit(const std::map<TopicPartition, int64_t>& offsets,
                           const std::string& member_id) const;
  // The group's committed offsets of `partitions` (librdkafka's OffsetFetch); partitions with
  // none are left out.
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& partitions);

  // Drops librdkafka's assignment (kNoGroup, kManualGroup), before the handle closes.
  void UnassignAll();

 private:
  using LibFlags = RdKafkaPartitionFlags;
  using PartitionState = SubscriptionState<LibFlags>::Partition;

  absl::Status Resolve(const TopicPartition& partition, PartitionState& state);
  // Brings librdkafka's assignment, pause flags and fetch positions in line (see above).
  absl::Status Sync();
  absl::Status SyncNoGroup();
  absl::Status SyncGroup();
  absl::Status SeekLib(const std::vector<std::pair<TopicPartition, int64_t>>& offsets);
  // librdkafka's incremental unassign / assign (at the given offsets).
  absl::Status UnassignLib(const std::vector<TopicPartition>& partitions);
  absl::Status AssignLib(const std::vector<std::pair<TopicPartition, int64_t>>& offsets);
  // kGroup: assigns again at their positions the partitions that went out of range and were
  // sought since.
  absl::Status Reassign();
  // The partition of the message taken before, its state and its batch: a poll's messages come
  // in runs of one partition, so the topic's name is copied and the two maps searched once per
  // run, not once per record. Valid while neither map loses an entry (one Sync to the next).
  struct TakeCursor {
    const void* topic = nullptr;  // librdkafka's rd_kafka_topic_t of `tp`, by identity
    std::optional<TopicPartition> tp;
    PartitionState* state = nullptr;       // null: not in the port's assignment
    PartitionRecords* batch = nullptr;     // null until a record of `tp` is taken
  };
  // Takes one librdkafka message (and destroys it) into `records`/`out_of_range`/`error`.
  void Take(rd_kafka_message_t* message, std::map<TopicPartition, PartitionRecords>& records,
            std::set<TopicPartition>& out_of_range, absl::Status& error, size_t& count,
            TakeCursor& cursor);
  // Points `cursor` at `message`'s partition (none for a message without a topic).
  void Locate(const rd_kafka_message_t* message, TakeCursor& cursor);

  rd_kafka_t* const rk_;
  const Mode mode_;
  const ConsumerConfig config_;
  const RdKafkaOptions options_;
  Clock& clock_;
  rd_kafka_queue_t* queue_ = nullptr;  // the consumer queue (messages, errors, rebalances)
  std::set<TopicPartition> lib_assigned_;  // kNoGroup, kManualGroup: librdkafka's assignment
  // Partitions that went out of range in librdkafka, which then holds them in an error state
  // that refuses seeks: they are unassigned and assigned again at their new position instead.
  // Kept apart from the SubscriptionState, because the port's assignment may drop and re-add
  // a partition (the runtime's corruption path does) while librdkafka still holds it.
  std::set<TopicPartition> lib_broken_;
};

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_CONSUMER_H_
