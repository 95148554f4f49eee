// A runtime instance crashes and a new one restarts over the same state directory.
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "fakes/mem_file_system.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

enum class CrashAt : uint64_t {
  kQuiescent = 0,  // once every input record is committed
  kMutation = 1,   // just before the N-th file-system mutation (a store write, a checkpoint step)
  kTime = 2,       // at a drawn moment after the start
};

// scenario.crash_restart_with_state_dir
//   A Runtime (1-2 stream threads, checkpointing every 100 ms while it restores) works over its
//   own view of the crash-model file system: it restores seed-sized changelogs and processes
//   input. It crashes — once its input is committed, just before a drawn file-system
//   mutation (mid store write, mid checkpoint: temp file, sync, rename, directory sync), or at
//   a drawn moment: MemFileSystem::Crash() loses every unsynced write and kills the
//   instance's view; its threads are then stopped without a clean close (no commit, no
//   checkpoint). A new Runtime over a fresh view restarts from whatever the disk kept and
//   processes more input.
//   The reference: when the crashed instance stopped, each changelog folded to some counts
//   and the input was committed to some offset; at least once then processes the input from
//   that offset on top of those counts (records the crashed instance processed and flushed
//   but did not commit count twice — exactly as the model says).
//   Must hold: the crashed instance stops within its timeout; every oracle invariant (no
//   checkpoint ever names data its stores had not flushed: a crash can then only lose data
//   that restoration brings back); the restarted instance converges with every store equal to
//   its changelog and counts equal to the reference.
// Which damage the crash does (scenario.crash_with_storage_damage); kNone for the plain story.
enum class Damage : uint64_t {
  kTornWrite = 0,
  kLostWrite = 1,
  kBitFlip = 2,
  kZeroedSector = 3,
  kVanishedEntry = 4,
  kMisdirectedWrite = 5,
  kLostDirUpdate = 6,
  kWrongType = 7,
  kNone = 8,
};

// When the crash comes: at any drawn moment (kAny), or at a drawn file-system mutation made
// while a stream thread still restores (kRestoring) or while every thread runs and processes
// input produced after restoration (kProcessing).
enum class Phase { kAny, kRestoring, kProcessing };

bool AllThreadsRunning(Runtime& runtime) {
  for (size_t i = 0; i < runtime.thread_count(); ++i) {
    if (runtime.thread(i).state() != StreamThreadState::kRunning) return false;
  }
  return true;
}

bool AnyThreadRestoring(Runtime& runtime) {
  for (size_t i = 0; i < runtime.thread_count(); ++i) {
    if (runtime.thread(i).state() == StreamThreadState::kPartitionsAssigned) return true;
  }
  return false;
}

struct CrashParams {
  int32_t partitions = 1;
  int32_t threads = 1;
  int records = 20;  // restoration long enough (many batches, checkpoints) to be crashed in
  int32_t restore_batch = 2;
  int input_before = 0;
  int input_after = 0;
  CrashAt crash_at = CrashAt::kQuiescent;
  uint64_t crash_mutation = 0;  // in a phase, only the mutations made in it count
  TimeNs crash_time_ns = 0;
  // Drawn only by the damage stories, so the plain one keeps its schedules.
  Damage damage = Damage::kNone;
  uint32_t damage_per_mille = 0;
  bool exactly_once = false;

  static CrashParams From(Draws& draw, bool with_damage, Phase phase) {
    const int records_min = phase == Phase::kRestoring ? 150 : 20;
    const bool any = phase == Phase::kAny;
    return {
        .partitions = draw.Int<int32_t>("partitions", 1, 3),
        .threads = draw.Int<int32_t>("threads", 1, 2),
        .records = draw.Int("records", records_min, records_min + 99),
        .restore_batch = draw.Int<int32_t>("restore_batch", 2, 20),
        .input_before = draw.Int("input_before", 0, 29),
        .input_after = draw.Int("input_after", 0, 29),
        .crash_at = any ? draw.Enum<CrashAt>("crash_at", 3)
                        : draw.Fixed("crash_at", CrashAt::kMutation),
        .crash_mutation = draw.Int<uint64_t>("crash_mutation", 0, any ? 299 : 39),
        .crash_time_ns = draw.Ms("crash_time_ms", 0, 59),
        .damage = with_damage ? draw.Enum<Damage>("damage", 8)
                              : draw.Fixed("damage", Damage::kNone),
        .damage_per_mille = with_damage ? draw.Int<uint32_t>("damage_per_mille", 0, 499)
                                        : draw.Fixed("damage_per_mille", uint32_t{0}),
        .exactly_once = with_damage ? draw.Bool("exactly_once")
                                    : draw.Fixed("exactly_once", false)};
  }
  // scenario.eos_crash_with_open_transaction: no damage, exactly once, a crash at a drawn
  // moment while restored tasks process (their transaction likely open).
  static CrashParams ForOpenTransaction(Draws& draw) {
    return {.partitions = draw.Int<int32_t>("partitions", 1, 3),
            .threads = draw.Int<int32_t>("threads", 1, 2),
            .records = draw.Int("records", 20, 119),
            .restore_batch = draw.Int<int32_t>("restore_batch", 2, 20),
            .input_before = draw.Int("input_before", 0, 29),
            .input_after = draw.Int("input_after", 0, 29),
            .crash_at = draw.Fixed("crash_at", CrashAt::kTime),
            .crash_time_ns = draw.Ms("crash_time_ms", 0, 99),
            .exactly_once = draw.Fixed("exactly_once", true)};
  }
  fakes::MemFileSystemDamage Rates() const {
    fakes::MemFileSystemDamage rates;
    switch (damage) {
      case Damage::kTornWrite: rates.torn_write_per_mille = damage_per_mille; break;
      case Damage::kLostWrite: rates.lost_write_per_mille = damage_per_mille; break;
      case Damage::kBitFlip: rates.bit_flip_per_mille = damage_per_mille; break;
      case Damage::kZeroedSector: rates.zeroed_sector_per_mille = damage_per_mille; break;
      // Per durable entry, of which a state directory has many more than files.
      case Damage::kVanishedEntry: rates.vanished_entry_per_mille = damage_per_mille / 5; break;
      case Damage::kMisdirectedWrite: rates.misdirected_write_per_mille = damage_per_mille; break;
      case Damage::kLostDirUpdate: rates.lost_dir_update_per_mille = damage_per_mille; break;
      case Damage::kWrongType: rates.wrong_type_per_mille = damage_per_mille / 5; break;
      case Damage::kNone: break;
    }
    return rates;
  }
};

void TraceDamageDone(const fakes::MemFileSystemDamageDone& done) {
  if (done.torn_writes > 0) TraceMark("fault", "damage/torn_write");
  if (done.lost_writes > 0) TraceMark("fault", "damage/lost_write");
  if (done.misdirected_writes > 0) TraceMark("fault", "damage/misdirected_write");
  if (done.bit_flips > 0) TraceMark("fault", "damage/bit_flip");
  if (done.zeroed_sectors > 0) TraceMark("fault", "damage/zeroed_sector");
  if (done.vanished_entries > 0) TraceMark("fault", "damage/vanished_entry");
  if (done.lost_dir_updates > 0) TraceMark("fault", "damage/lost_dir_update");
  if (done.wrong_types > 0) TraceMark("fault", "damage/wrong_type");
}

// The story's state, shared by its phases: setup, first instance (until the crash), crash,
// restart.
class CrashStory {
 public:
  CrashStory(RunEnv& env, const CrashParams& p, Phase phase)
      : env_(env), p_(p), phase_(phase), w_(/*faults=*/false, p.partitions),
        config_(CatalogueRuntimeConfig(p.threads, p.restore_batch)) {}

  void Setup() {
    for (int32_t q = 0; q < p_.partitions; ++q) {
      w_.WriteChangelog(q, p_.records);
      ProduceInput(w_, env_.random, q, p_.input_before);
    }
    if (p_.exactly_once) {
      config_.processing_guarantee = "exactly_once_v2";
      TraceMark("scenario", "exactly once");
    }
    w_.fs.SetDamage(p_.Rates());
    if (p_.crash_at == CrashAt::kMutation) {
      w_.fs.SetBeforeMutationHook([this](std::string_view, const std::string&) {
        if (InPhase() && ++mutations_ > p_.crash_mutation) Crash();
      });
    }
  }

  // The first instance runs until the drawn moment, crashes, and is reaped without a clean
  // close: what its threads still do meanwhile reaches the broker (and counts in the
  // reference) but not the disk.
  void FirstInstanceCrashes(Draws& draw) {
    std::unique_ptr<FileSystem> view = w_.fs.NewProcessView();
    Runtime first(config_, w_.broker, w_.clock, *view, w_.LogStoreOpenerOn(*view));
    instance_ = &first;
    // Start creates and locks the application's directory: a crash at that first mutation
    // kills the process before it started (the lock through its dead view then fails).
    const absl::Status started = first.Start();
    RS_CHECK(started.ok() || crashed_, "{}", started.ToString());
    if (phase_ == Phase::kProcessing) {
      AwaitConverged(env_, w_, MembersOf(first, config_), p_.partitions);
      for (int32_t q = 0; q < p_.partitions; ++q) {
        ProduceInput(w_, env_.random, q, draw.Int(20, 79));
      }
      processing_ = true;
    }
    AwaitCrashMoment(first);
    Crash();
    for (size_t i = 0; i < first.thread_count(); ++i) {
      const std::string who = first.thread(i).name();
      ShutdownWithin(env_, w_, who, kShutdownTimeoutNs, [&](TimeNs t) {
        (void)first.thread(i).Shutdown(t, /*clean=*/false);  // fails: its view is dead
        return absl::OkStatus();
      });
    }
    // Every thread stopped: Close only moves the state to NOT_RUNNING. A crash leaves nothing
    // open either.
    (void)first.Close(kShutdownTimeoutNs);
    w_.oracle.CheckFinal();
  }

  // A new instance over a fresh view restarts from whatever the disk kept.
  void Restart() {
    w_.fs.SetBeforeMutationHook({});
    w_.fs.SetDamage({});  // one crash, one dose of damage
    Baselines baselines = BaselinesNow(w_, p_.partitions);
    const auto committed = w_.broker.CommittedOffsets("app");
    for (auto& [q, base] : baselines) {
      auto it = committed.find(testing::Input(q));
      base.input_from = it == committed.end() ? 0 : it->second;
    }
    for (int32_t q = 0; q < p_.partitions; ++q) {
      ProduceInput(w_, env_.random, q, p_.input_after);
    }
    std::unique_ptr<FileSystem> view = w_.fs.NewProcessView();
    Runtime again(config_, w_.broker, w_.clock, *view, w_.LogStoreOpenerOn(*view));
    RS_CHECK(again.Start().ok());
    FinishRuntime(env_, w_, again, config_, p_.partitions, baselines);
  }

 private:
  bool InPhase() {
    switch (phase_) {
      case Phase::kAny: return true;
      case Phase::kRestoring: return instance_ != nullptr && AnyThreadRestoring(*instance_);
      case Phase::kProcessing: return processing_;
    }
    return false;
  }

  void AwaitCrashMoment(Runtime& first) {
    switch (p_.crash_at) {
      case CrashAt::kQuiescent:
        AwaitConverged(env_, w_, MembersOf(first, config_), p_.partitions);
        break;
      case CrashAt::kMutation: {
        // A phase that ends before its drawn mutation ends in a crash at once.
        const TimeNs deadline = w_.clock.NowNs() + kConvergeNsMax;
        while (!crashed_ && w_.clock.NowNs() < deadline &&
               (phase_ != Phase::kRestoring || !AllThreadsRunning(first))) {
          w_.clock.SleepFor(phase_ == Phase::kAny ? 5 * kMillisecond : kMillisecond);
        }
        break;
      }
      case CrashAt::kTime:
        w_.clock.SleepFor(p_.crash_time_ns);
        break;
    }
  }

  // MemFileSystem::Crash(): every unsynced write is lost and the instance's view dies.
  void Crash() {
    if (crashed_) return;
    crashed_ = true;
    TraceMark("scenario", "crash");
    if (phase_ == Phase::kRestoring && instance_ != nullptr && AnyThreadRestoring(*instance_)) {
      TraceMark("scenario", "crash while restoring");
    }
    if (phase_ == Phase::kProcessing) TraceMark("scenario", "crash while processing");
    if (p_.exactly_once && instance_ != nullptr) NoteOpenTransactions(*instance_);
    w_.fs.Crash();
    TraceDamageDone(w_.fs.last_damage());
  }

  // Exactly once: whether a stream thread's transaction is open on the broker at the crash
  // (its records then stay in the changelogs, aborted when the restart initialises the id).
  void NoteOpenTransactions(Runtime& runtime) {
    for (size_t i = 0; i < runtime.thread_count(); ++i) {
      const auto txn = w_.broker.Transaction(runtime.thread(i).TransactionalId());
      if (txn.has_value() && txn->ongoing) TraceMark("cover", "crash with a transaction open");
    }
  }

  RunEnv& env_;
  const CrashParams p_;
  const Phase phase_;
  RuntimeWorld w_;
  RuntimeConfig config_;
  bool crashed_ = false;
  Runtime* instance_ = nullptr;  // the first instance, once it exists
  uint64_t mutations_ = 0;
  bool processing_ = false;  // kProcessing: restored, and the input during is produced
};

void PlayCrashStory(RunEnv& env, Draws& draw, const CrashParams& p, Phase phase) {
  CrashStory story(env, p, phase);
  Phases phases(draw);
  phases.Run("setup", [&] { story.Setup(); });
  phases.Run("first instance crashes", [&] { story.FirstInstanceCrashes(draw); });
  phases.Run("restart and tail", [&] { story.Restart(); });
}

void CrashAndRestart(RunEnv& env, bool with_damage, Phase phase = Phase::kAny) {
  Draws draw(env);
  const CrashParams p = CrashParams::From(draw, with_damage, phase);
  draw.NoteParams();
  PlayCrashStory(env, draw, p, phase);
}

void CrashRestartWithStateDir(RunEnv& env) { CrashAndRestart(env, /*with_damage=*/false); }
RESTORESIM_SCENARIO({.name = "scenario.crash_restart_with_state_dir",
                     .description = "an instance crashes (unsynced writes lost) and a new one "
                                    "restarts from the disk's checkpoints",
                     .steps_hint = 4'000,
                     .body = CrashRestartWithStateDir});

// scenario.crash_with_storage_damage
//   The crash of scenario.crash_restart_with_state_dir, at the same drawn moments, now also
//   damages what the disk kept (MemFileSystemDamage, one kind per run at a drawn rate): a torn
//   last write, a lost write (a Sync that never reached the disk), a flipped bit, a zeroed
//   sector, or a vanished file or directory entry — under at-least-once or exactly-once.
//   Must hold: everything scenario.crash_restart_with_state_dir requires. A damaged store is
//   detected (LogStore: DataLoss; checkpoint files: checksums) and wiped and restored from its
//   changelog, a checkpoint never names data its store lost, and the restarted instance ends
//   with every store equal to its changelog and counts equal to the reference — damage costs a
//   restoration, never a silent loss.
void CrashWithStorageDamage(RunEnv& env) { CrashAndRestart(env, /*with_damage=*/true); }
RESTORESIM_SCENARIO({.name = "scenario.crash_with_storage_damage",
                     .description = "a crash also tears, loses, flips or zeroes written data or "
                                    "drops an entry; the restarted instance detects it and "
                                    "restores",
                     .steps_hint = 4'000,
                     .body = CrashWithStorageDamage});

// scenario.storage_damage_while_restoring
//   The damage story with the crash at a drawn file-system mutation (a restored batch's store
//   write, a checkpoint step) made while a stream thread still restores its actives, over
//   changelogs long enough for several batches and checkpoints — under at-least-once or
//   exactly-once, with one damage kind at a drawn rate.
//   Must hold: everything scenario.crash_with_storage_damage requires: the restarted instance
//   restores each damaged store from its changelog and ends with every store equal to its
//   changelog and counts equal to the reference.
void StorageDamageWhileRestoring(RunEnv& env) {
  CrashAndRestart(env, /*with_damage=*/true, Phase::kRestoring);
}
RESTORESIM_SCENARIO({.name = "scenario.storage_damage_while_restoring",
                     .description = "a crash with storage damage while a stream thread restores; "
                                    "the restart restores again",
                     .steps_hint = 8'000,
                     .body = StorageDamageWhileRestoring});

// scenario.storage_damage_while_processing
//   The damage story once restoration is over: every thread runs, more input arrives, and the
//   crash comes at a drawn mutation made while that input is processed (store flushes at
//   commit, periodic checkpoints, exactly-once's commit points).
//   Must hold: as scenario.storage_damage_while_restoring; input the crashed instance processed
//   but did not commit counts twice under at-least-once, never under exactly-once.
void StorageDamageWhileProcessing(RunEnv& env) {
  CrashAndRestart(env, /*with_damage=*/true, Phase::kProcessing);
}
RESTORESIM_SCENARIO({.name = "scenario.storage_damage_while_processing",
                     .description = "a crash with storage damage while restored tasks process "
                                    "input; the restart recovers",
                     .steps_hint = 8'000,
                     .body = StorageDamageWhileProcessing});

// scenario.eos_crash_with_open_transaction
//   A Runtime under exactly_once_v2 (1-2 threads) restores and processes; 20-79 more records
//   per partition arrive and 0-99 ms later the instance crashes (unsynced writes lost, threads
//   stopped without a clean close): its stream threads' transactions are likely open, their
//   records already in the changelogs. A new instance over a fresh view restarts: its threads'
//   producers initialise the same transactional ids, which aborts the open transactions.
//   Must hold: every oracle invariant (no aborted record is restored into or applied to a
//   store: the histories leave out what abort markers took back); the restart's restoration
//   completes though the crashed transactions' records and markers sit in the changelogs; the
//   crashed instance's uncommitted input is processed once, by the restart (exact counts); no
//   checkpoint existed while its tasks processed, so its stores were wiped and restored.
void EosCrashWithOpenTransaction(RunEnv& env) {
  Draws draw(env);
  const CrashParams p = CrashParams::ForOpenTransaction(draw);
  draw.NoteParams();
  PlayCrashStory(env, draw, p, Phase::kProcessing);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_crash_with_open_transaction",
                     .description = "exactly once: a crash with transactions open, then a "
                                    "restart that never restores their aborted records",
                     .steps_hint = 8'000,
                     .body = EosCrashWithOpenTransaction});

}  // namespace

}  // namespace restoresim::scenarios
