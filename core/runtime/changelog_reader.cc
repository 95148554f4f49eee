#include "core/runtime/changelog_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {
namespace {

// Whether the keys of `map` that `keep(key, value)` selects are `list`, in order.
template <typename Map, typename Keep>
bool KeysEqual(const Map& map, Keep keep, const std::vector<TopicPartition>& list) {
  size_t n = 0;
  for (const auto& [key, value] : map) {
    if (!keep(key, value)) continue;
    if (n >= list.size() || list[n] != key) return false;
    ++n;
  }
  return n == list.size();
}

// The keys of `map` that `keep(key, value)` selects, in order.
template <typename Map, typename Keep>
std::vector<TopicPartition> KeysWhere(const Map& map, Keep keep) {
  std::vector<TopicPartition> keys;
  for (const auto& [key, value] : map) {
    if (keep(key, value)) keys.push_back(key);
  }
  return keys;
}

}  // namespace

ChangelogReader::ChangelogReader(RestoreConsumer& consumer, Admin& admin,
                                 StateRestoreListener* listener, ChangelogReaderConfig config)
    : consumer_(consumer), admin_(admin), listener_(listener), config_(config) {}

ChangelogReader::~ChangelogReader() { RS_OBSERVE(OnReaderDestroyed, config_.name); }

void ChangelogReader::Register(const TopicPartition& changelog, StateManager* state,
                               TaskIncarnation owner) {
  RS_OBSERVE(OnRegistered, config_.name, changelog, owner,
             state != nullptr ? state->type() : TaskType::kActive);
  RS_CHECK(!changelogs_.contains(changelog), "changelog {} registered twice (by {} and {})",
           changelog.ToString(), changelogs_.contains(changelog)
                                     ? changelogs_.at(changelog).owner.ToString()
                                     : std::string(),
           owner.ToString());
  RS_CHECK(state != nullptr && state->OwnsChangelog(changelog),
           "task {} registers changelog {} it does not own", owner.ToString(),
           changelog.ToString());
  RS_CHECK(!state->pending_type().has_value(),
           "task {} registers changelog {} with a type conversion still pending",
           owner.ToString(), changelog.ToString());
  Changelog c;
  c.state = state;
  c.owner = owner;
  c.type = state->type();
  c.store = state->StoreForChangelog(changelog)->name();
  changelogs_.emplace(changelog, std::move(c));
}

void ChangelogReader::Unregister(const std::vector<TopicPartition>& changelogs,
                                 UnregisterReason reason) {
  for (const TopicPartition& tp : changelogs) {
    auto it = changelogs_.find(tp);
    if (it == changelogs_.end()) continue;
    const Changelog& c = it->second;
    // Suspended only after a start: a changelog unregistered before it was prepared never
    // started (found by the rapidcheck model of the reader,
    // properties/changelog_reader_model_test.cc), and a completed one ended.
    if (c.status == State::kRestoring && c.started) NotifySuspended(tp, c, reason);
    RS_OBSERVE(OnUnregistered, config_.name, tp, c.owner);
    changelogs_.erase(it);
  }
  // A refused assignment (the real client's Assign reads metadata) is tried again by the
  // step's last UpdateAssignment, and by every step after.
  (void)UpdateAssignment();
}

bool ChangelogReader::IsRegistered(const TopicPartition& changelog) const {
  return changelogs_.contains(changelog);
}

std::vector<TopicPartition> ChangelogReader::ChangelogsOf(const TaskIncarnation& owner) const {
  std::vector<TopicPartition> of;
  for (const auto& [tp, c] : changelogs_) {
    if (c.owner == owner) of.push_back(tp);
  }
  return of;
}

std::set<TopicPartition> ChangelogReader::Registered() const {
  std::set<TopicPartition> all;
  for (const auto& [tp, c] : changelogs_) all.insert(tp);
  return all;
}

std::set<TopicPartition> ChangelogReader::Completed() const {
  std::set<TopicPartition> done;
  for (const auto& [tp, c] : changelogs_) {
    if (c.status == State::kCompleted) done.insert(tp);
  }
  return done;
}

ReaderMode ChangelogReader::mode() const {
  if (RS_MUTANT(kStandbysResumedEarly)) {
    // Mutation standbys-resumed-early: standby updating as soon as one active completed.
    for (const auto& [tp, c] : changelogs_) {
      if (c.type == TaskType::kActive && c.status == State::kCompleted) {
        return ReaderMode::kStandbyUpdating;
      }
    }
  }
  for (const auto& [tp, c] : changelogs_) {
    if (c.type == TaskType::kActive && c.status != State::kCompleted) {
      return ReaderMode::kActiveRestoring;
    }
  }
  return ReaderMode::kStandbyUpdating;
}

int64_t ChangelogReader::RemainingOf(const TaskIncarnation& owner) const {
  int64_t remaining = 0;
  for (const auto& [tp, c] : changelogs_) {
    if (c.owner == owner && c.type == TaskType::kActive && c.status != State::kCompleted) {
      remaining += c.status == State::kRestoring ? std::max<int64_t>(1, c.end_offset - c.position)
                                                 : 1;
    }
  }
  return remaining;
}

int64_t ChangelogReader::RemainingRecords() const {
  int64_t remaining = 0;
  for (const auto& [tp, c] : changelogs_) {
    if (c.type == TaskType::kActive && c.status == State::kRestoring) {
      remaining += std::max<int64_t>(0, c.end_offset - c.position);
    }
  }
  return remaining;
}

// Assigned: every changelog restoring (and those being positioned). Paused: standbys while an
// active restores. Found by RealBugsTest.AChangelogWithoutAnEndOffsetStallsOnlyItsOwnTask:
// assigning every changelog not completed put one whose end offset could not be read (so never
// positioned) in the consumer's assignment, and every poll failed for want of its position —
// the other tasks stopped restoring and its own task.timeout.ms never ran (196 failed steps in
// 20 s). Kafka adds a changelog to the restore consumer once it is initialised.
absl::Status ChangelogReader::UpdateAssignment(const std::set<TopicPartition>& preparing) {
  // Called every step, and what it wants rarely changes: the wanted lists are compared with
  // the current ones in place and built only on a change (a TopicPartition copy allocates).
  auto wanted = [&](const TopicPartition& tp, const Changelog& c) {
    const bool want = c.status == State::kRestoring || preparing.contains(tp);
    RS_CHECK(!want || c.status != State::kCompleted, "completed changelog {} assigned",
             tp.ToString());
    return want;
  };
  if (!KeysEqual(changelogs_, wanted, assigned_)) {
    std::vector<TopicPartition> assign = KeysWhere(changelogs_, wanted);
    absl::Status s = assign.empty() ? consumer_.Unassign() : consumer_.Assign(assign);
    if (!s.ok()) return s;
    assigned_ = std::move(assign);
    paused_.clear();  // Assign keeps the pause state of partitions that stay; re-derive it
    for (const TopicPartition& tp : consumer_.Paused()) paused_.push_back(tp);
  }
  const ReaderMode now = mode();
  if (now != reported_mode_) {
    reported_mode_ = now;
    RS_OBSERVE(OnReaderMode, config_.name, now);
  }
  // Restoring actives pauses the wanted standbys; otherwise nothing is paused.
  auto paused = [&](const TopicPartition& tp, const Changelog& c) {
    return now == ReaderMode::kActiveRestoring && c.type == TaskType::kStandby && wanted(tp, c);
  };
  if (!KeysEqual(changelogs_, paused, paused_)) {
    std::vector<TopicPartition> want_paused = KeysWhere(changelogs_, paused);
    if (!paused_.empty()) {
      if (absl::Status s = consumer_.Resume(paused_); !s.ok()) return s;
    }
    if (!want_paused.empty()) {
      if (absl::Status s = consumer_.Pause(want_paused); !s.ok()) return s;
    }
    paused_ = std::move(want_paused);
  }
  return absl::OkStatus();
}

// Seeks new changelogs to their checkpointed position (or the beginning) and learns the end
// offsets of new active ones. A retryable failure leaves them registered for the next step.
absl::Status ChangelogReader::Prepare(RestoreStep& step) {
  std::vector<TopicPartition> fresh_actives;
  bool any_fresh = false;
  for (const auto& [tp, c] : changelogs_) {
    if (c.status != State::kRegistered) continue;
    any_fresh = true;
    if (c.type == TaskType::kActive) fresh_actives.push_back(tp);
  }
  if (!any_fresh) return absl::OkStatus();
  std::map<TopicPartition, int64_t> end_offsets;
  if (!fresh_actives.empty()) {
    absl::StatusOr<std::map<TopicPartition, int64_t>> ends = admin_.EndOffsets(fresh_actives);
    if (!ends.ok() && !IsRetryable(ends.status())) return ends.status();
    if (ends.ok()) end_offsets = std::move(*ends);
    // Kafka starts (or checks) the task timeout of the tasks whose end offsets it could not
    // read, and clears it for those it could.
    for (const TopicPartition& tp : fresh_actives) {
      const TaskIncarnation& owner = changelogs_.at(tp).owner;
      if (end_offsets.contains(tp)) {
        step.progressed.insert(owner);
      } else {
        step.stalled.emplace(owner, ends.ok() ? absl::UnavailableError(fmt::format(
                                                    "no end offset for {}", tp.ToString()))
                                              : ends.status());
      }
    }
  }
  // Only what can be positioned now joins the consumer's assignment; the rest retry later.
  std::set<TopicPartition> seekable;
  for (const auto& [tp, c] : changelogs_) {
    if (c.status != State::kRegistered) continue;
    if (c.type != TaskType::kActive || end_offsets.contains(tp)) seekable.insert(tp);
  }
  if (seekable.empty()) return absl::OkStatus();
  if (absl::Status s = UpdateAssignment(seekable); !s.ok()) return s;
  for (const TopicPartition& tp : seekable) {
    Changelog& c = changelogs_.at(tp);
    RS_CHECK(c.status == State::kRegistered, "{} prepared twice", tp.ToString());
    const std::optional<int64_t> start = c.state->StartOffset(tp);
    absl::Status s = start ? consumer_.Seek(tp, *start) : consumer_.SeekToBeginning({tp});
    if (!s.ok()) return s;
    absl::StatusOr<int64_t> position = consumer_.Position(tp);
    if (!position.ok()) {
      if (IsRetryable(position.status())) continue;
      if (position.status().code() != absl::StatusCode::kOutOfRange) return position.status();
      position = start.value_or(0);  // reported as out of range by the next poll
    }
    c.position = *position;
    c.status = State::kRestoring;
    if (c.type == TaskType::kActive) c.end_offset = end_offsets.at(tp);
    // Kafka tells the listener of every changelog it prepares: also an active with nothing to
    // restore, and one whose checkpoint lies past the log's end (its first fetch is out of
    // range: corruption, as in Kafka).
    NotifyStart(tp, c);
    if (c.type != TaskType::kActive) continue;
    if (c.position == c.end_offset) {  // nothing to restore: start and end at once, 0 records
      c.state->Advance(tp, c.end_offset);
      c.status = State::kCompleted;
      RS_OBSERVE(OnCompleted, config_.name, tp, c.owner, c.position, c.end_offset);
      NotifyEnd(tp, c);
      c.state = nullptr;  // the task goes to the stream thread; never touched again here
      continue;
    }
    // The store picks its write path for a restoration of this size (rocksdb_store.h).
    c.state->StoreForChangelog(tp)->BeginRestore(std::max<int64_t>(0, c.end_offset - c.position));
  }
  return absl::OkStatus();
}

bool ChangelogReader::AnyFetchable() const {
  return std::any_of(assigned_.begin(), assigned_.end(), [&](const TopicPartition& tp) {
    return changelogs_.at(tp).status == State::kRestoring &&
           std::find(paused_.begin(), paused_.end(), tp) == paused_.end();
  });
}

absl::Status ChangelogReader::Apply(PartitionRecords& batch, RestoreStep& step) {
  auto it = changelogs_.find(batch.partition);
  if (it == changelogs_.end() || batch.records.empty()) return absl::OkStatus();
  Changelog& c = it->second;
  if (c.status != State::kRestoring) return absl::OkStatus();  // e.g. completed this step
  // The records' keys and values move into the writes: the batch is not looked at again (a
  // failed write seeks back and fetches it anew).
  std::vector<KeyValueWrite> writes;
  writes.reserve(batch.records.size());
  int64_t next = c.position;
  for (ConsumerRecord& r : batch.records) {
    if (c.type == TaskType::kActive && r.offset >= c.end_offset) break;  // beyond the target
    RS_CHECK(r.offset >= next, "changelog {} went back from {} to {}",
             batch.partition.ToString(), next, r.offset);
    writes.push_back(KeyValueWrite{std::move(r.key), std::move(r.value)});
    next = r.offset + 1;
  }
  if (writes.empty()) return absl::OkStatus();
  const int64_t count = static_cast<int64_t>(writes.size());
  KeyValueStore* store = c.state->StoreForChangelog(batch.partition);
  // A changelog stays registered only while its task's stores are open (the mutation
  // partial-unregister-on-corruption breaks this; with the oracle off nothing else stops it).
  RS_INVARIANT("registration", c.owner.ToString(), store != nullptr,
               "changelog {} is registered but its task's store is closed",
               batch.partition.ToString());
  if (absl::Status s = store->RestoreBatch(std::move(writes)); !s.ok()) return s;
  c.state->Advance(batch.partition, next);
  c.position = next;
  c.restored += count;
  total_restored_ += count;
  if (c.type == TaskType::kStandby) standby_updated_ += count;
  step.records += count;
  step.progressed.insert(c.owner);
  RS_OBSERVE(OnRestoredBatch, config_.name, batch.partition, c.owner, c.type, next, count);
  NotifyBatch(batch.partition, c, next - 1, count);
  return absl::OkStatus();
}

absl::Status ChangelogReader::CheckCompletion(const TopicPartition& tp, Changelog& c,
                                              RestoreStep& step) {
  if (c.type != TaskType::kActive || c.status != State::kRestoring) return absl::OkStatus();
  absl::StatusOr<int64_t> position = consumer_.Position(tp);
  if (position.ok()) c.position = std::max(c.position, std::min(*position, c.end_offset));
  if (c.position < c.end_offset) return absl::OkStatus();
  // Everything restored is in the store before the restoration counts as ended (a store that
  // buffers, on the bulk path, writes its last chunk here). A failure leaves the changelog
  // restoring: the next step tries again.
  if (absl::Status s = c.state->StoreForChangelog(tp)->EndRestore(); !s.ok()) return s;
  c.state->Advance(tp, std::max(c.state->StartOffset(tp).value_or(0), c.end_offset));
  c.status = State::kCompleted;
  c.state = nullptr;  // the task goes to the stream thread; never touched again here
  step.completed.push_back(tp);
  step.progressed.insert(c.owner);
  RS_OBSERVE(OnCompleted, config_.name, tp, c.owner, c.position, c.end_offset);
  NotifyEnd(tp, c);
  return absl::OkStatus();
}

absl::Status ChangelogReader::RefreshEndOffsets() {
  std::vector<TopicPartition> restoring;
  for (const auto& [tp, c] : changelogs_) {
    if (c.type == TaskType::kActive && c.status == State::kRestoring && c.end_offset >= 0) {
      restoring.push_back(tp);
    }
  }
  refresh_pending_ = false;
  if (restoring.empty()) return absl::OkStatus();
  absl::StatusOr<std::map<TopicPartition, int64_t>> ends = admin_.EndOffsets(restoring);
  if (!ends.ok()) {
    refresh_pending_ = true;
    return ends.status();
  }
  for (const TopicPartition& tp : restoring) {
    auto it = ends->find(tp);
    if (it == ends->end()) {
      refresh_pending_ = true;  // asked again at the next step
      continue;
    }
    Changelog& c = changelogs_.at(tp);
    RS_CHECK(c.status == State::kRestoring, "refreshing {} that is not restoring", tp.ToString());
    // End offsets only grow (no unclean leader election in this model).
    c.end_offset = std::max(c.end_offset, it->second);
    RS_OBSERVE(OnEndOffsetRefreshed, config_.name, tp, c.end_offset);
  }
  return absl::OkStatus();
}

absl::StatusOr<RestoreStep> ChangelogReader::Restore() {
  RestoreStep step;
  failed_step_.reset();
  if (refresh_pending_) (void)RefreshEndOffsets();
  if (absl::Status s = Step(step); !s.ok()) {
    // Its batches are in the stores and its reports stand: kept for TakeFailedStep (and the
    // reports for the next step, if nobody takes them).
    failed_step_ = std::move(step);
    return s;
  }
  return WithReports(std::move(step));
}

RestoreStep ChangelogReader::TakeFailedStep() {
  RestoreStep step = std::move(failed_step_).value_or(RestoreStep{});
  failed_step_.reset();
  return WithReports(std::move(step));
}

RestoreStep ChangelogReader::WithReports(RestoreStep step) {
  step.corrupted = std::move(corrupted_);
  corrupted_.clear();
  step.failed = std::move(failed_);
  failed_.clear();
  for (const auto& [who, error] : step.failed) {
    step.stalled.erase(who);
    step.progressed.erase(who);
  }
  return step;
}

absl::Status ChangelogReader::Step(RestoreStep& step) {
  if (absl::Status s = Prepare(step); !s.ok()) return s;
  if (absl::Status s = UpdateAssignment(); !s.ok()) return s;
  if (!AnyFetchable()) return absl::OkStatus();
  absl::StatusOr<PollResult> polled = consumer_.Poll(config_.poll_timeout_ns);
  if (!polled.ok()) {
    if (IsRetryable(polled.status())) return absl::OkStatus();
    return polled.status();
  }
  if (!polled->out_of_range.empty()) MarkCorrupted(polled->out_of_range);
  for (PartitionRecords& batch : polled->partitions) {
    if (absl::Status s = Apply(batch, step); !s.ok()) {
      // The consumer is past this batch, but its store is not: seek back to what the store
      // holds (a retryable error: the next step fetches the batch again), or the next step
      // would skip these records and CheckCompletion would take the consumer's position for
      // restored data. Found by scenario.crash_restart_with_state_dir (a store write failing
      // after a crash left a restored store without the failed batch). A non-retryable error
      // fails the task instead (its changelogs are unregistered).
      if (IsRetryable(s)) {
        TraceMark("cover", "restored batch's write failed: seek back to the store");
        auto it = changelogs_.find(batch.partition);
        if (absl::Status seek = consumer_.Seek(it->first, it->second.position); !seek.ok()) {
          return seek;
        }
      }
      StoreError(batch.partition, s, step);
    }
  }
  std::vector<TopicPartition> ending;
  for (auto& [tp, c] : changelogs_) ending.push_back(tp);
  for (const TopicPartition& tp : ending) {
    auto it = changelogs_.find(tp);
    if (it == changelogs_.end()) continue;  // its owner failed on an earlier changelog
    if (absl::Status s = CheckCompletion(tp, it->second, step); !s.ok()) StoreError(tp, s, step);
  }
  for (const TaskIncarnation& who : step.progressed) step.stalled.erase(who);
  return UpdateAssignment();
}

}  // namespace restoresim
