#include "core/util/mutation.h"

#include <array>

namespace restoresim {
namespace {

// The zoo. Sources are paraphrased in docs/ZOO.md, with the call site of each.
constexpr std::array<MutationInfo, static_cast<size_t>(Mutation::kCount)> kMutations = {{
    {Mutation::kCreateBeforeClose, "create-before-close", "PR 8988 review",
     "the restore thread applies a round's CREATE items before its CLOSE items"},
    {Mutation::kEarlyTypeFlip, "early-type-flip", "PR 8988 review",
     "a recycled task's type changes on the stream thread, before the restore thread "
     "unregistered its old changelogs"},
    {Mutation::kLatePartitionCapture, "late-partition-capture", "PR 8988",
     "a CLOSE reads the task's changelogs after the stream thread cleared its state manager, "
     "and the restore thread unregisters only what the CLOSE names"},
    {Mutation::kPartialUnregisterOnCorruption, "partial-unregister-on-corruption", "PR 12519",
     "on corruption only the changelogs named in the error are unregistered; the task's other "
     "changelogs keep restoring into stores about to be wiped"},
    {Mutation::kRevivedNotReadded, "revived-not-readded", "PR 13829",
     "a task revived after corruption is re-created but never handed back to the restore "
     "thread"},
    {Mutation::kStaleCheckpointAfterCorruption, "stale-checkpoint-after-corruption",
     "KAFKA-10391",
     "wiping a corrupted task's stores leaves its checkpoint file, so the revived task starts "
     "from the corrupted offsets"},
    {Mutation::kEndInsteadOfSuspended, "end-instead-of-suspended", "KAFKA-10575",
     "the restore listener gets 'restore end' instead of 'restore suspended' when a changelog "
     "is unregistered before it completed"},
    {Mutation::kWaitWithoutPredicate, "wait-without-predicate", "KAFKA-17929",
     "the restore thread's shutdown waits on its condition variable once instead of re-checking "
     "its predicate, so a spurious wake-up returns before the thread stopped"},
    {Mutation::kNoCheckpointAfterRestoration, "no-checkpoint-after-restoration", "KAFKA-12634",
     "an active task that completed restoration is handed back without a checkpoint of what it "
     "restored"},
    {Mutation::kStalePendingAction, "stale-pending-action", "KAFKA-15690",
     "a close decided for a restoring task is applied when it comes back restored, although a "
     "newer assignment wants it again"},
    {Mutation::kRunningBeforeInit, "running-before-init", "PR 14214",
     "a stream thread reports RUNNING once its restore thread restores no active task, "
     "ignoring actives still waiting to be initialised"},
    {Mutation::kCheckpointEndNotRestored, "checkpoint-end-not-restored", "KAFKA-16017",
     "a task removed from the restore thread checkpoints its changelog's end offset instead of "
     "the offset it restored to"},
    {Mutation::kRestoredListedTwice, "restored-listed-twice", "KAFKA-17402",
     "a restored task is booked as running before it is dropped from the tasks the restore "
     "thread holds, so one task is listed in two places"},
    {Mutation::kResumeOnRestoreThread, "resume-on-restore-thread", "restoresim",
     "a task's input partition is resumed from the restore thread (a completion callback) "
     "instead of by the stream thread"},
    {Mutation::kStandbysResumedEarly, "standbys-resumed-early", "restoresim",
     "the changelog reader switches to standby updating when the first active changelog "
     "completes instead of the last"},
    {Mutation::kIdleWithoutWakeup, "idle-without-wakeup", "restoresim",
     "the idle restore thread sleeps out its wait instead of waiting on its queue, so a new "
     "round waits for the timeout (a lost wake-up)"},
    {Mutation::kEventsDrainedLate, "events-drained-late", "restoresim",
     "the stream thread drains the restore thread's events only in loops whose poll returned "
     "no records"},
    {Mutation::kResumeAsRecreate, "resume-as-recreate", "restoresim",
     "a task handed back by the restore thread and wanted again in the same form is closed and "
     "re-created instead of resumed"},
    {Mutation::kDamagedStoreRetried, "damaged-store-retried", "restoresim",
     "a store that reports data loss when opened is opened again every loop instead of wiped "
     "and restored (the runtime before issue 12)"},
    {Mutation::kDamageCutAsTornTail, "damage-cut-as-torn-tail", "restoresim",
     "LogStore recovery takes damage inside flushed data for a torn tail and keeps the records "
     "before it (the store before issue 12: one flipped bit dropped every later record)"},
    {Mutation::kCheckpointKeepsConnections, "checkpoint-keeps-connections", "KIP-921 thread",
     "the transport's checkpoint notification neither closes its connections nor holds calls "
     "made while the instance is frozen"},
    {Mutation::kStaleEndOffsetsAfterRestore, "stale-end-offsets-after-restore", "KIP-921 thread",
     "after a restore the changelog reader keeps the end offsets it read before the freeze"},
    {Mutation::kClonesKeepIdentity, "clones-keep-identity", "KIP-921 thread",
     "a restored instance keeps the image's process identity, so clones share client ids"},
    {Mutation::kEosRestoreReadUncommitted, "eos-restore-read-uncommitted", "restoresim",
     "under exactly once the restore consumer reads uncommitted, restoring aborted records"},
    {Mutation::kEosCheckpointWhileProcessing, "eos-checkpoint-while-processing", "restoresim",
     "under exactly once a task starts processing with its restoration's checkpoint on disk"},
    {Mutation::kStoreOffsetIgnored, "store-offset-ignored", "KIP-1035",
     "the offset a store recorded with its data is not compared with the checkpoint, so a store "
     "older than its checkpoint is served as complete (Kafka Streams before 4.3)"},
    {Mutation::kCorruptionFailsThread, "corruption-fails-thread", "restoresim",
     "a store's data loss found while processing (a corrupted block read) fails the stream "
     "thread instead of reviving the task (the runtime before issue 25; Kafka's RocksDBStore "
     "throws a ProcessorStateException there)"},
    {Mutation::kEosUncleanStateKept, "eos-unclean-state-kept", "PR 8180",
     "under exactly once a task's state left without a checkpoint (a crash, a dirty close "
     "mid-transaction) is kept and restored over instead of wiped, keeping aborted writes "
     "(Kafka wipes it: ProcessorStateManager's TaskCorruptedException, EOSUncleanShutdown)"},
    {Mutation::kResumeWithoutWakeup, "resume-without-wakeup", "KAFKA-14299",
     "a resume sends the restore threads no wake-up, so one idle with every task paused sees "
     "the resume only when its idle wait runs out (the state updater before PR 13025)"},
    {Mutation::kResumeWithoutRegister, "resume-without-register", "restoresim",
     "a resumed task's changelogs are not registered again, as if a pause had kept them "
     "registered (Kafka's pauseTask does; this runtime's unregisters them)"},
    {Mutation::kCloseTimeoutNotRunning, "close-timeout-not-running", "restoresim",
     "a close that times out moves the client to NOT_RUNNING with a stream thread still "
     "running, so a later close returns at once (the runtime before issue 23's bug 3 fix)"},
}};

constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < kMutations.size(); ++i) {
    if (static_cast<size_t>(kMutations[i].id) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kMutations must list every Mutation in enum order");

}  // namespace

std::span<const MutationInfo> AllMutations() { return kMutations; }

const MutationInfo& InfoOf(Mutation mutation) {
  return kMutations[static_cast<size_t>(mutation)];
}

std::optional<Mutation> MutationByName(std::string_view name) {
  for (const MutationInfo& m : kMutations) {
    if (m.name == name) return m.id;
  }
  return std::nullopt;
}

std::string MutationSet::ToString() const {
  std::string text;
  for (const MutationInfo& m : kMutations) {
    if (!contains(m.id)) continue;
    if (!text.empty()) text += ',';
    text += m.name;
  }
  return text;
}

}  // namespace restoresim
