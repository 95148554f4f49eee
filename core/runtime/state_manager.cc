#include "core/runtime/runtime_observer.h"
#include "core/runtime/state_manager.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/runtime/count_topology.h"
#include "core/util/check.h"
#include "core/util/run_context.h"
#include "core/util/sim_hooks.h"

namespace restoresim {

std::string_view TaskTypeName(TaskType type) {
  return type == TaskType::kActive ? "active" : "standby";
}

StateManager::StateManager(TaskId id, TaskType type, StateManagerConfig config)
    : id_(id), type_(type), config_(std::move(config)) {
  RS_CHECK(config_.fs != nullptr && config_.open_store, "state manager {} without fs/opener",
           id_.ToString());
  if (config_.directory != nullptr) lock_token_ = config_.directory->NewToken();
}

StateManager::~StateManager() {
  SimNoAbortScope no_abort;  // a destructor that locks the directory: see core/util/sim_hooks.h
  RS_OBSERVE(OnStoresReleased, *this);
  if (config_.directory != nullptr) config_.directory->Unlock(config_.task_dir, lock_token_);
}

TopicPartition StateManager::ChangelogOf(const std::string& store) const {
  return TopicPartition{ChangelogTopic(config_.application_id, store), id_.partition};
}

void StateManager::RefreshChangelogs() {
  changelogs_.clear();
  for (const auto& [name, store] : stores_) changelogs_.push_back(ChangelogOf(name));
  RS_CHECK_EQ(changelogs_.size(), stores_.size(), "task {}: changelogs out of step",
              id_.ToString());
}

absl::Status StateManager::ReadCheckpointOrNote() {
  absl::StatusOr<CheckpointOffsets> read = ReadCheckpoint(*config_.fs, checkpoint_path());
  checkpointed_.clear();
  if (read.ok()) {
    checkpointed_ = *read;
    checkpoint_note_.clear();
    return absl::OkStatus();
  }
  if (absl::IsFailedPrecondition(read.status())) {
    // A directory, FIFO or device where the checkpoint should be (never read: the file system
    // refuses it at once): no claim. It goes, so that the next checkpoint can be written.
    checkpoint_note_ = fmt::format("no readable checkpoint, restoring from the beginning: {}",
                                   std::string(read.status().message()));
    TraceMark("cover", "checkpoint not a regular file: removed");
    absl::Status s = config_.fs->DeleteDirRecursively(checkpoint_path());
    if (absl::IsFailedPrecondition(s)) s = config_.fs->DeleteFile(checkpoint_path());
    RS_CHECK(checkpointed_.empty());
    return s;
  }
  if (read.status().code() == absl::StatusCode::kNotFound) {
    checkpoint_note_ = "no checkpoint: restoring from the beginning";
    return absl::OkStatus();
  }
  if (read.status().code() == absl::StatusCode::kDataLoss) {
    checkpoint_note_ = fmt::format("unreadable checkpoint, restoring from the beginning: {}",
                                   std::string(read.status().message()));
    return absl::OkStatus();
  }
  return read.status();  // an I/O error: the caller retries or fails the task
}

absl::Status StateManager::RegisterStores() {
  RS_CHECK(stores_.empty(), "task {} registers its stores twice", id_.ToString());
  absl::Status s = OpenStores();
  if (!s.ok() && !stores_.empty()) {
    // Some stores opened and then one failed: close them, so that a retry starts afresh (it
    // used to fail "registers its stores twice" with two stores).
    for (auto& [name, store] : stores_) (void)store->Close();
    stores_.clear();
    RefreshChangelogs();
  }
  return s;
}

absl::Status StateManager::OpenStores() {
  if (config_.directory != nullptr && !config_.directory->TryLock(config_.task_dir, lock_token_)) {
    return absl::AbortedError(fmt::format(
        "task directory {} is locked by another stream thread's incarnation", config_.task_dir));
  }
  if (absl::Status s = config_.fs->CreateDirIfMissing(config_.task_dir); !s.ok()) {
    // A file where the task directory should be is damage: the task is wiped and restored.
    if (absl::IsAlreadyExists(s)) return absl::DataLossError(s.message());
    return s;
  }
  if (absl::Status s = ReadCheckpointOrNote(); !s.ok()) return s;
  for (const std::string& name : config_.store_names) {
    const TopicPartition changelog = ChangelogOf(name);
    const std::string store_dir = config_.task_dir + "/" + name;
    // A store the checkpoint names but whose directory is gone lost everything: the claim is
    // withdrawn on disk first, before a new empty store exists there, so that no crash can
    // leave a checkpoint naming offsets of an empty store.
    if (checkpointed_.contains(changelog) && absl::IsNotFound(config_.fs->FileExists(store_dir))) {
      if (absl::Status s = DropCheckpointClaim(changelog, "its directory is missing"); !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<std::unique_ptr<KeyValueStore>> store = config_.open_store(store_dir, name);
    if (!store.ok()) return store.status();
    if ((*store)->CreatedOnOpen() && checkpointed_.contains(changelog)) {
      if (absl::Status s = DropCheckpointClaim(changelog, "it was empty of its files"); !s.ok()) {
        (void)(*store)->Close();
        return s;
      }
    }
    if (absl::Status s = WipeIfNotAtCheckpoint(name, *store); !s.ok()) return s;
    const bool has_data = (*store)->NumEntries() > 0;
    // Mutation eos-unclean-state-kept (PR 8180): the data is kept and restored over.
    if (config_.exactly_once && has_data && !checkpointed_.contains(changelog) &&
        !RS_MUTANT(kEosUncleanStateKept)) {
      // Data without a checkpoint under exactly-once: it may hold uncommitted writes.
      checkpoint_note_ = fmt::format("store '{}' has data but no checkpoint under exactly-once: "
                                     "wiped, restoring from the beginning",
                                     name);
      (void)(*store)->Close();
      store->reset();
      RS_OBSERVE(OnStoreWipedOnOpen, *this, changelog);
      if (absl::Status s = config_.fs->DeleteDirRecursively(config_.task_dir + "/" + name);
          !s.ok()) {
        return s;
      }
      store = config_.open_store(config_.task_dir + "/" + name, name);
      if (!store.ok()) return store.status();
    }
    stores_.emplace(name, std::move(*store));
    RefreshChangelogs();
  }
  // Exactly once, as Kafka 4.0-4.2's ProcessorStateManager: the checkpoint is read, then
  // deleted before anything can write to the stores; from here on a crash leaves data without
  // a checkpoint (wiped at the next open), never a checkpoint the stores have outgrown. One is
  // written again during restoration, at its end and at a clean close.
  if (config_.exactly_once) {
    if (absl::Status s = DeleteCheckpointFile(); !s.ok()) return s;
  }
  pending_ = checkpointed_;
  flushed_ = checkpointed_;
  last_checkpoint_ = checkpointed_;
  RS_OBSERVE(OnStoresRegistered, *this);
  return absl::OkStatus();
}

// A store whose own offset is behind what the checkpoint claims for it holds less than the
// claim (a stale copy of its directory, a lost directory update of its manifest, a database of
// an earlier flush): the records in between would never be restored. Under exactly-once, one
// ahead of the claim was written after the checkpoint (which is deleted before processing: a
// checkpoint that came back, say by a lost directory update of its deletion), so it may hold
// uncommitted writes. Either is data loss: the claim is withdrawn on disk first (as for a lost
// directory), then the store is wiped and opened empty. A store with data that recorded no
// offset (state directories of earlier releases) is trusted as before.
absl::Status StateManager::WipeIfNotAtCheckpoint(const std::string& name,
                                                 std::unique_ptr<KeyValueStore>& store) {
  const TopicPartition changelog = ChangelogOf(name);
  // Mutation store-offset-ignored (KIP-1035): the store's own offset is not looked at.
  if (RS_MUTANT(kStoreOffsetIgnored)) return absl::OkStatus();
  std::optional<int64_t> reached = store->CommittedOffset();
  // An empty store reaches nothing, whatever it recorded (a store of an earlier release cut
  // back to before its first flush, say); wiping it costs nothing.
  if (!reached.has_value() && store->NumEntries() == 0) reached = 0;
  auto claim = checkpointed_.find(changelog);
  if (!reached.has_value() || claim == checkpointed_.end()) return absl::OkStatus();
  const bool behind = *reached < claim->second;
  const bool uncommitted = config_.exactly_once && *reached > claim->second;
  if (!behind && !uncommitted) return absl::OkStatus();
  const std::string why =
      behind ? fmt::format("its store '{}' reaches only offset {}", name, *reached)
             : fmt::format("its store '{}' holds writes up to offset {}, past the checkpoint, "
                           "under exactly-once",
                           name, *reached);
  TraceMark("cover", behind ? "store behind its checkpoint" : "eos store past its checkpoint");
  (void)store->Close();
  store.reset();
  if (absl::Status s = DropCheckpointClaim(changelog, why); !s.ok()) return s;
  RS_OBSERVE(OnStoreWipedOnOpen, *this, changelog);
  const std::string store_dir = config_.task_dir + "/" + name;
  if (absl::Status s = config_.fs->DeleteDirRecursively(store_dir); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<KeyValueStore>> reopened = config_.open_store(store_dir, name);
  if (!reopened.ok()) return reopened.status();
  store = std::move(*reopened);
  RS_CHECK(!checkpointed_.contains(changelog), "task {}: claim on {} kept", id_.ToString(),
           changelog.ToString());
  return absl::OkStatus();
}

absl::Status StateManager::DeleteCheckpointFile() {
  absl::Status s = config_.fs->DeleteFile(checkpoint_path());
  if (s.code() == absl::StatusCode::kNotFound) {
    checkpoint_on_disk_ = false;
    RS_OBSERVE(OnCheckpointDeleted, *this);
    return absl::OkStatus();
  }
  if (!s.ok()) return s;
  checkpoint_on_disk_ = false;
  RS_OBSERVE(OnCheckpointDeleted, *this);
  TraceMark("cover", "eos checkpoint deleted");
  return config_.fs->SyncDir(config_.task_dir);
}

absl::Status StateManager::DropCheckpointClaim(const TopicPartition& changelog,
                                               std::string_view why) {
  RS_CHECK(checkpointed_.contains(changelog), "task {}: no claim on {} to drop", id_.ToString(),
           changelog.ToString());
  const int64_t claimed = checkpointed_.at(changelog);
  checkpointed_.erase(changelog);
  TraceMark("cover", "store lost: checkpoint claim withdrawn");
  RS_OBSERVE(OnCheckpointClaimDropped, *this, changelog, claimed);
  checkpoint_note_ = fmt::format("the checkpoint named {} at {}, but {}: restoring it from the "
                                 "beginning",
                                 changelog.ToString(), claimed, why);
  absl::Status s = WriteCheckpoint(*config_.fs, checkpoint_path(), checkpointed_);
  RS_CHECK(!checkpointed_.contains(changelog), "task {}: claim on {} kept", id_.ToString(),
           changelog.ToString());
  return s;
}

bool StateManager::OwnsChangelog(const TopicPartition& changelog) const {
  return std::find(changelogs_.begin(), changelogs_.end(), changelog) != changelogs_.end();
}

std::vector<TopicPartition> StateManager::ChangelogPartitions() const {
  RS_CHECK_EQ(changelogs_.size(), stores_.size(), "task {}: changelogs out of step",
              id_.ToString());
  return changelogs_;
}

bool StateManager::ChangelogsAllIn(const std::set<TopicPartition>& partitions) const {
  for (const TopicPartition& changelog : changelogs_) {
    if (!partitions.contains(changelog)) return false;
  }
  return true;
}

std::vector<std::string> StateManager::StoreNames() const {
  std::vector<std::string> names;
  for (const auto& [name, store] : stores_) names.push_back(name);
  return names;
}

KeyValueStore* StateManager::Store(std::string_view name) {
  auto it = stores_.find(name);
  return it == stores_.end() ? nullptr : it->second.get();
}

KeyValueStore* StateManager::StoreForChangelog(const TopicPartition& changelog) {
  RS_CHECK_EQ(changelogs_.size(), stores_.size(), "task {}: changelogs out of step",
              id_.ToString());
  auto changelog_of = changelogs_.begin();
  for (auto& [name, store] : stores_) {  // changelogs_ is in stores_' order
    if (*changelog_of++ == changelog) return store.get();
  }
  return nullptr;
}

std::optional<int64_t> StateManager::StartOffset(const TopicPartition& changelog) const {
  auto it = pending_.find(changelog);
  if (it == pending_.end()) return std::nullopt;
  return it->second;
}

void StateManager::Advance(const TopicPartition& changelog, int64_t next_offset) {
  RS_CHECK(OwnsChangelog(changelog), "task {} advances changelog {} it does not own",
           id_.ToString(), changelog.ToString());
  int64_t& pending = pending_[changelog];
  RS_CHECK(next_offset >= pending, "task {}: changelog {} would go back from {} to {}",
           id_.ToString(), changelog.ToString(), pending, next_offset);
  pending = next_offset;
  RS_OBSERVE(OnAdvance, *this, changelog, next_offset);
}

// Each store records, with the data it makes durable, how far in its changelog the data
// reaches (KIP-1035): what lets the next open tell a store older than its checkpoint.
absl::Status StateManager::Flush() {
  for (auto& [name, store] : stores_) {
    auto pending = pending_.find(ChangelogOf(name));
    absl::Status s = pending == pending_.end() ? store->Flush() : store->Commit(pending->second);
    if (!s.ok()) {
      TraceMark("cover", "store flush failed");
      return s;
    }
  }
  flushed_ = pending_;
  RS_OBSERVE(OnFlushed, *this);
  return absl::OkStatus();
}

absl::Status StateManager::Checkpoint() {
  RS_CHECK(!stores_.empty(), "task {} checkpoints without stores", id_.ToString());
  for (const auto& [tp, offset] : flushed_) {
    auto it = pending_.find(tp);
    RS_CHECK(it != pending_.end() && offset <= it->second,
             "task {}: checkpoint of {} at {} ahead of the data", id_.ToString(), tp.ToString(),
             offset);
  }
  RS_OBSERVE(OnCheckpointWritten, *this, flushed_);
  absl::Status s = WriteCheckpoint(*config_.fs, checkpoint_path(), flushed_);
  if (!s.ok()) TraceMark("cover", "checkpoint write failed");
  if (s.ok()) {
    last_checkpoint_ = flushed_;
    checkpoint_on_disk_ = true;
  }
  RS_OBSERVE(OnCheckpointResult, *this, s.ok());
  return s;
}

absl::Status StateManager::RemoveCheckpointForProcessing() {
  if (!config_.exactly_once) return absl::OkStatus();
  // Mutation eos-checkpoint-while-processing: the checkpoint restoration wrote stays.
  if (RS_MUTANT(kEosCheckpointWhileProcessing)) return absl::OkStatus();
  return DeleteCheckpointFile();
}

absl::Status StateManager::Close(bool clean) {
  absl::Status first;
  if (clean) {
    first = Flush();
    if (first.ok()) first = Checkpoint();
  }
  RS_OBSERVE(OnStoresClosing, *this, clean && first.ok());
  for (auto& [name, store] : stores_) {
    absl::Status s = store->Close();
    if (first.ok()) first = s;
  }
  RS_OBSERVE(OnStoresReleased, *this);
  return first;
}

void StateManager::Clear() {
  RS_OBSERVE(OnStoresReleased, *this);
  stores_.clear();
  RefreshChangelogs();
  if (config_.directory != nullptr) config_.directory->Unlock(config_.task_dir, lock_token_);
  pending_.clear();
  flushed_.clear();
  last_checkpoint_.clear();
}

bool StateManager::CheckpointNeeded(bool enforce, int64_t delta_min) const {
  RS_CHECK(delta_min >= 0, "task {}: checkpoint threshold {}", id_.ToString(), delta_min);
  if (!registered()) return false;
  const bool needed =
      enforce || OffsetDeltaSinceCheckpoint() > delta_min || StandbyWithoutCheckpoint();
  RS_OBSERVE(OnCheckpointDecision, *this, enforce, delta_min, StandbyWithoutCheckpoint(), needed);
  return needed;
}

int64_t StateManager::OffsetDeltaSinceCheckpoint() const {
  int64_t delta = 0;
  for (const auto& [changelog, next] : pending_) {
    auto it = last_checkpoint_.find(changelog);
    const int64_t before = it == last_checkpoint_.end() ? 0 : it->second;
    RS_CHECK(next >= before, "task {}: changelog {} at {} behind its checkpoint {}",
             id_.ToString(), changelog.ToString(), next, before);
    delta += next - before;
  }
  RS_CHECK(delta >= 0);
  return delta;
}

absl::Status StateManager::Wipe() {
  for (auto& [name, store] : stores_) {
    RS_CHECK(!store->IsOpen(), "task {} wiped with store '{}' open", id_.ToString(), name);
  }
  // Mutation stale-checkpoint-after-corruption (KAFKA-10391): the stores go, the checkpoint
  // naming the corrupted offsets stays.
  if (RS_MUTANT(kStaleCheckpointAfterCorruption)) {
    RS_OBSERVE(OnWiped, *this);
    for (const std::string& name : config_.store_names) {
      absl::Status s = config_.fs->DeleteDirRecursively(config_.task_dir + "/" + name);
      if (!s.ok() && !absl::IsNotFound(s)) return s;
    }
    return absl::OkStatus();
  }
  absl::Status s = config_.fs->DeleteDirRecursively(config_.task_dir);
  // A file in place of the directory (damage) goes as well.
  if (absl::IsFailedPrecondition(s)) s = config_.fs->DeleteFile(config_.task_dir);
  // Observed only once it happened: a wipe through a crashed disk (an instance's dirty close
  // after its crash, under exactly once) leaves the directory as it was.
  if (s.ok() || absl::IsNotFound(s)) RS_OBSERVE(OnWiped, *this);
  return s;
}

void StateManager::PrepareNewTaskType(TaskType type) {
  // Recycled again before the restore thread completed the last change: the latest wins, and
  // asking for the current type cancels the change.
  if (type == type_) {
    pending_type_.reset();
  } else {
    pending_type_ = type;
  }
}

bool StateManager::MaybeCompleteTaskTypeConversion() {
  if (!pending_type_.has_value()) return false;
  const TaskType from = type_;
  type_ = *pending_type_;
  pending_type_.reset();
  RS_CHECK(type_ != from, "task {}: a type conversion to the same type", id_.ToString());
  RS_OBSERVE(OnTypeConversion, *this, from, type_);
  return true;
}

}  // namespace restoresim
