// ChangelogReader, part 3: the restore listener (actives) and the standby update listener
// (KIP-988), called where Kafka's StoreChangelogReader calls them (changelog_reader.h states the
// rules); each call is observed before it is made, so the oracle judges it in order.
#include <algorithm>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {
namespace {

// The standby update listener does not know the changelog's current end: the restore consumer
// port reports no lag (Kafka's currentLag), so it is always unknown, as Kafka passes -1.
constexpr int64_t kEndOffsetUnknown = -1;

}  // namespace

void ChangelogReader::NotifyStart(const TopicPartition& tp, Changelog& c) {
  RS_CHECK(!c.started && c.status == State::kRestoring, "{}: listener start twice or early",
           tp.ToString());
  c.started = true;
  if (c.type == TaskType::kStandby) {
    RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kStandbyStart);
    if (config_.standby_listener != nullptr) {
      config_.standby_listener->OnUpdateStart(tp, c.store, c.position);
    }
    return;
  }
  RS_CHECK(c.end_offset >= 0, "{}: restore start without an end offset", tp.ToString());
  // A checkpoint past the end announces nothing (Kafka: the log may have been truncated between
  // reading its end and the consumer's position).
  c.announced = std::max<int64_t>(0, c.end_offset - c.position);
  RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kStart);
  if (listener_ != nullptr) listener_->OnRestoreStart(tp, c.store, c.position, c.end_offset);
}

void ChangelogReader::NotifyBatch(const TopicPartition& tp, const Changelog& c,
                                  int64_t batch_end_offset, int64_t records) {
  RS_CHECK(c.started && records > 0, "{}: a batch of {} outside a start", tp.ToString(),
           records);
  if (c.type == TaskType::kStandby) {
    RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kStandbyBatch);
    if (config_.standby_listener != nullptr) {
      config_.standby_listener->OnBatchLoaded(tp, c.store, c.owner.id, batch_end_offset, records,
                                              kEndOffsetUnknown);
    }
    return;
  }
  RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kBatch);
  if (listener_ != nullptr) listener_->OnBatchRestored(tp, c.store, batch_end_offset, records);
}

void ChangelogReader::NotifyEnd(const TopicPartition& tp, const Changelog& c) {
  RS_CHECK(c.type == TaskType::kActive && c.started && c.status == State::kCompleted,
           "{}: restore end of a changelog that did not complete", tp.ToString());
  RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kEnd);
  if (listener_ != nullptr) listener_->OnRestoreEnd(tp, c.store, c.restored);
}

void ChangelogReader::NotifySuspended(const TopicPartition& tp, const Changelog& c,
                                      UnregisterReason reason) {
  RS_CHECK(c.started && c.status == State::kRestoring, "{}: suspended without a start",
           tp.ToString());
  if (c.type == TaskType::kStandby) {
    if (reason == UnregisterReason::kShutdown) return;  // Kafka's clear(): no listener calls
    RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kStandbySuspended);
    if (config_.standby_listener != nullptr) {
      config_.standby_listener->OnUpdateSuspended(
          tp, c.store, c.position - 1, kEndOffsetUnknown,
          reason == UnregisterReason::kPromoted
              ? StandbyUpdateListener::SuspendReason::kPromoted
              : StandbyUpdateListener::SuspendReason::kMigrated);
    }
    return;
  }
  if (RS_MUTANT(kEndInsteadOfSuspended)) {
    // Mutation end-instead-of-suspended (KAFKA-10575).
    RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kEnd);
    if (listener_ != nullptr) listener_->OnRestoreEnd(tp, c.store, c.restored);
  } else {
    RS_OBSERVE(OnListener, config_.name, tp, ListenerCall::kSuspended);
    if (listener_ != nullptr) listener_->OnRestoreSuspended(tp, c.store, c.restored);
  }
  // Mutation checkpoint-end-not-restored (KAFKA-16017): the position recorded for the
  // checkpoint the task writes as it leaves is the changelog's end, not what it restored.
  if (RS_MUTANT(kCheckpointEndNotRestored) && c.state != nullptr && c.end_offset > 0) {
    c.state->Advance(tp, c.end_offset);
  }
}

std::map<TaskIncarnation, OwnerRestoration> ChangelogReader::RestorationByOwner() const {
  std::map<TaskIncarnation, OwnerRestoration> by_owner;
  for (const auto& [tp, c] : changelogs_) {
    OwnerRestoration& o = by_owner[c.owner];
    o.type = c.type;
    o.restored += c.restored;
    o.announced += c.announced;
  }
  return by_owner;
}

}  // namespace restoresim
