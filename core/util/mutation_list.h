// The zoo's mutations (mutation.h), one row each, in the enum's order:
//
//   RESTORESIM_MUTATION(kEnumerator, "name-in-the-cli", "source", "the mistake, in one line")
//
// An X-macro list: mutation.h expands it into enum Mutation, mutation.cc into the table of
// MutationInfo, so a row here is the whole declaration of a mutation (its RS_MUTANT site, its
// bug program in scenarios/catalogue_bugs.cc and its entry in docs/ZOO.md are the rest). Names
// and order are the mutations' identity (`zoo --mutations`, repro files, MutationSet bits):
// append, never reorder or rename. Sources are paraphrased in docs/ZOO.md, with the call site
// of each. No include guard: included once per expansion, with RESTORESIM_MUTATION defined by
// the includer, which undefines it after.
RESTORESIM_MUTATION(kCreateBeforeClose, "create-before-close", "PR 8988 review",
    "the restore thread applies a round's CREATE items before its CLOSE items")
RESTORESIM_MUTATION(kEarlyTypeFlip, "early-type-flip", "PR 8988 review",
    "a recycled task's type changes on the stream thread, before the restore thread "
    "unregistered its old changelogs")
RESTORESIM_MUTATION(kLatePartitionCapture, "late-partition-capture", "PR 8988",
    "a CLOSE reads the task's changelogs after the stream thread cleared its state manager, "
    "and the restore thread unregisters only what the CLOSE names")
RESTORESIM_MUTATION(kPartialUnregisterOnCorruption, "partial-unregister-on-corruption", "PR 12519",
    "on corruption only the changelogs named in the error are unregistered; the task's other "
    "changelogs keep restoring into stores about to be wiped")
RESTORESIM_MUTATION(kRevivedNotReadded, "revived-not-readded", "PR 13829",
    "a task revived after corruption is re-created but never handed back to the restore "
    "thread")
RESTORESIM_MUTATION(kStaleCheckpointAfterCorruption, "stale-checkpoint-after-corruption",
    "KAFKA-10391",
    "wiping a corrupted task's stores leaves its checkpoint file, so the revived task starts "
    "from the corrupted offsets")
RESTORESIM_MUTATION(kEndInsteadOfSuspended, "end-instead-of-suspended", "KAFKA-10575",
    "the restore listener gets 'restore end' instead of 'restore suspended' when a changelog "
    "is unregistered before it completed")
RESTORESIM_MUTATION(kWaitWithoutPredicate, "wait-without-predicate", "KAFKA-17929",
    "the restore thread's shutdown waits on its condition variable once instead of re-checking "
    "its predicate, so a spurious wake-up returns before the thread stopped")
RESTORESIM_MUTATION(kNoCheckpointAfterRestoration, "no-checkpoint-after-restoration", "KAFKA-12634",
    "an active task that completed restoration is handed back without a checkpoint of what it "
    "restored")
RESTORESIM_MUTATION(kStalePendingAction, "stale-pending-action", "KAFKA-15690",
    "a close decided for a restoring task is applied when it comes back restored, although a "
    "newer assignment wants it again")
RESTORESIM_MUTATION(kRunningBeforeInit, "running-before-init", "PR 14214",
    "a stream thread reports RUNNING once its restore thread restores no active task, "
    "ignoring actives still waiting to be initialised")
RESTORESIM_MUTATION(kCheckpointEndNotRestored, "checkpoint-end-not-restored", "KAFKA-16017",
    "a task removed from the restore thread checkpoints its changelog's end offset instead of "
    "the offset it restored to")
RESTORESIM_MUTATION(kRestoredListedTwice, "restored-listed-twice", "KAFKA-17402",
    "a restored task is booked as running before it is dropped from the tasks the restore "
    "thread holds, so one task is listed in two places")
RESTORESIM_MUTATION(kResumeOnRestoreThread, "resume-on-restore-thread", "restoresim",
    "a task's input partition is resumed from the restore thread (a completion callback) "
    "instead of by the stream thread")
RESTORESIM_MUTATION(kStandbysResumedEarly, "standbys-resumed-early", "restoresim",
    "the changelog reader switches to standby updating when the first active changelog "
    "completes instead of the last")
RESTORESIM_MUTATION(kIdleWithoutWakeup, "idle-without-wakeup", "restoresim",
    "the idle restore thread sleeps out its wait instead of waiting on its queue, so a new "
    "round waits for the timeout (a lost wake-up)")
RESTORESIM_MUTATION(kEventsDrainedLate, "events-drained-late", "restoresim",
    "the stream thread drains the restore thread's events only in loops whose poll returned "
    "no records")
RESTORESIM_MUTATION(kResumeAsRecreate, "resume-as-recreate", "restoresim",
    "a task handed back by the restore thread and wanted again in the same form is closed and "
    "re-created instead of resumed")
RESTORESIM_MUTATION(kDamagedStoreRetried, "damaged-store-retried", "restoresim",
    "a store that reports data loss when opened is opened again every loop instead of wiped "
    "and restored (the runtime before issue 12)")
RESTORESIM_MUTATION(kDamageCutAsTornTail, "damage-cut-as-torn-tail", "restoresim",
    "LogStore recovery takes damage inside flushed data for a torn tail and keeps the records "
    "before it (the store before issue 12: one flipped bit dropped every later record)")
RESTORESIM_MUTATION(kCheckpointKeepsConnections, "checkpoint-keeps-connections", "KIP-921 thread",
    "the transport's checkpoint notification neither closes its connections nor holds calls "
    "made while the instance is frozen")
RESTORESIM_MUTATION(kStaleEndOffsetsAfterRestore, "stale-end-offsets-after-restore",
    "KIP-921 thread",
    "after a restore the changelog reader keeps the end offsets it read before the freeze")
RESTORESIM_MUTATION(kClonesKeepIdentity, "clones-keep-identity", "KIP-921 thread",
    "a restored instance keeps the image's process identity, so clones share client ids")
RESTORESIM_MUTATION(kEosRestoreReadUncommitted, "eos-restore-read-uncommitted", "restoresim",
    "under exactly once the restore consumer reads uncommitted, restoring aborted records")
RESTORESIM_MUTATION(kEosCheckpointWhileProcessing, "eos-checkpoint-while-processing", "restoresim",
    "under exactly once a task starts processing with its restoration's checkpoint on disk")
RESTORESIM_MUTATION(kStoreOffsetIgnored, "store-offset-ignored", "KIP-1035",
    "the offset a store recorded with its data is not compared with the checkpoint, so a store "
    "older than its checkpoint is served as complete (Kafka Streams before 4.3)")
RESTORESIM_MUTATION(kCorruptionFailsThread, "corruption-fails-thread", "restoresim",
    "a store's data loss found while processing (a corrupted block read) fails the stream "
    "thread instead of reviving the task (the runtime before issue 25; Kafka's RocksDBStore "
    "throws a ProcessorStateException there)")
RESTORESIM_MUTATION(kEosUncleanStateKept, "eos-unclean-state-kept", "PR 8180",
    "under exactly once a task's state left without a checkpoint (a crash, a dirty close "
    "mid-transaction) is kept and restored over instead of wiped, keeping aborted writes "
    "(Kafka wipes it: ProcessorStateManager's TaskCorruptedException, EOSUncleanShutdown)")
RESTORESIM_MUTATION(kResumeWithoutWakeup, "resume-without-wakeup", "KAFKA-14299",
    "a resume sends the restore threads no wake-up, so one idle with every task paused sees "
    "the resume only when its idle wait runs out (the state updater before PR 13025)")
RESTORESIM_MUTATION(kResumeWithoutRegister, "resume-without-register", "restoresim",
    "a resumed task's changelogs are not registered again, as if a pause had kept them "
    "registered (Kafka's pauseTask does; this runtime's unregisters them)")
RESTORESIM_MUTATION(kCloseTimeoutNotRunning, "close-timeout-not-running", "restoresim",
    "a close that times out moves the client to NOT_RUNNING with a stream thread still "
    "running, so a later close returns at once (the runtime before issue 23's bug 3 fix)")
RESTORESIM_MUTATION(kCloseSentThenStarted, "close-sent-then-started", "KAFKA-16077",
    "a restored task whose CLOSE was already sent starts running when the assignment wants it "
    "again: the close pending for it is forgotten, as a later assignment overwrote it")
RESTORESIM_MUTATION(kRevokedClosedAtRevocation, "revoked-closed-at-revocation", "KAFKA-7672",
    "a running active whose partition is revoked is closed at the revocation, on its partial "
    "view, instead of when the rebalance's assignment says what becomes of it (kept, recycled "
    "to a standby, or closed)")
RESTORESIM_MUTATION(kRestoreBatchRecordByRecord, "restore-batch-record-by-record", "restoresim",
    "the log store writes a restored batch one record at a time, so a write failing part-way "
    "leaves the batch's first records applied though the batch failed (the store before issue "
    "23's fifth bug fix; KeyValueStore::RestoreBatch is all or nothing)")
RESTORESIM_MUTATION(kOffsetSumsStale, "offset-sums-stale", "restoresim",
    "a stream thread reports, for a task directory it no longer holds, the offset sum it last "
    "reported while it held the task, not what the directory's checkpoint names: a task that "
    "ran and closed clean since looks far behind its state to the assignor (the sums before "
    "issue 23's offset_sums invariant)")
