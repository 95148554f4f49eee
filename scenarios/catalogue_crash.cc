// A runtime instance crashes and a new one restarts over the same state directory.
#include <fmt/format.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/util/check.h"
#include "fakes/mem_file_system.h"
#include "scenarios/catalogue.h"
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
  kNone = 6,
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

void CrashAndRestart(RunEnv& env, bool with_damage, Phase phase = Phase::kAny) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int32_t threads = 1 + static_cast<int32_t>(env.Choose(2));
  // Restoration long enough (many batches, several checkpoints) to be crashed in.
  const int records = (phase == Phase::kRestoring ? 150 : 20) + static_cast<int>(env.Choose(100));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(19));
  const int input_before = static_cast<int>(env.Choose(30));
  const int input_after = static_cast<int>(env.Choose(30));
  const auto crash_at =
      phase == Phase::kAny ? static_cast<CrashAt>(env.Choose(3)) : CrashAt::kMutation;
  // In a phase, only the mutations made in it count.
  const uint64_t crash_mutation = env.Choose(phase == Phase::kAny ? 300 : 40);
  const TimeNs crash_time_ns = static_cast<TimeNs>(env.Choose(60)) * kMillisecond;
  // Drawn only by the damage story, so the plain one keeps its schedules.
  const Damage damage = with_damage ? static_cast<Damage>(env.Choose(6)) : Damage::kNone;
  const uint32_t damage_per_mille = with_damage ? static_cast<uint32_t>(env.Choose(500)) : 0;
  const bool exactly_once = with_damage && env.Choose(2) == 1;
  NoteParams(
      fmt::format("partitions={} threads={} records={} restore_batch={} input_before={} "
                  "input_after={} crash_at={} crash_mutation={} crash_time_ms={} damage={} "
                  "damage_per_mille={} exactly_once={}",
                  partitions, threads, records, restore_batch, input_before, input_after,
                  static_cast<uint64_t>(crash_at), crash_mutation, crash_time_ns / kMillisecond,
                  static_cast<uint64_t>(damage), damage_per_mille, exactly_once));
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, input_before);
  }
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  if (exactly_once) {
    config.processing_guarantee = "exactly_once_v2";
    TraceMark("scenario", "exactly once");
  }
  fakes::MemFileSystemDamage rates;
  switch (damage) {
    case Damage::kTornWrite: rates.torn_write_per_mille = damage_per_mille; break;
    case Damage::kLostWrite: rates.lost_write_per_mille = damage_per_mille; break;
    case Damage::kBitFlip: rates.bit_flip_per_mille = damage_per_mille; break;
    case Damage::kZeroedSector: rates.zeroed_sector_per_mille = damage_per_mille; break;
    // Per durable entry, of which a state directory has many more than files.
    case Damage::kVanishedEntry: rates.vanished_entry_per_mille = damage_per_mille / 5; break;
    case Damage::kMisdirectedWrite: rates.misdirected_write_per_mille = damage_per_mille; break;
    case Damage::kNone: break;
  }
  w.fs.SetDamage(rates);
  bool crashed = false;
  Runtime* instance = nullptr;  // the first instance, once it exists
  auto crash = [&]() {
    if (crashed) return;
    crashed = true;
    TraceMark("scenario", "crash");
    if (phase == Phase::kRestoring && instance != nullptr && AnyThreadRestoring(*instance)) {
      TraceMark("scenario", "crash while restoring");
    }
    if (phase == Phase::kProcessing) TraceMark("scenario", "crash while processing");
    w.fs.Crash();
    const fakes::MemFileSystemDamageDone done = w.fs.last_damage();
    if (done.torn_writes > 0) TraceMark("fault", "damage/torn_write");
    if (done.lost_writes > 0) TraceMark("fault", "damage/lost_write");
    if (done.misdirected_writes > 0) TraceMark("fault", "damage/misdirected_write");
    if (done.bit_flips > 0) TraceMark("fault", "damage/bit_flip");
    if (done.zeroed_sectors > 0) TraceMark("fault", "damage/zeroed_sector");
    if (done.vanished_entries > 0) TraceMark("fault", "damage/vanished_entry");
  };
  uint64_t mutations = 0;
  bool processing = false;  // kProcessing: restored, and the input during is produced
  auto in_phase = [&]() {
    switch (phase) {
      case Phase::kAny: return true;
      case Phase::kRestoring: return instance != nullptr && AnyThreadRestoring(*instance);
      case Phase::kProcessing: return processing;
    }
    return false;
  };
  if (crash_at == CrashAt::kMutation) {
    w.fs.SetBeforeMutationHook([&](std::string_view, const std::string&) {
      if (in_phase() && ++mutations > crash_mutation) crash();
    });
  }
  {
    std::unique_ptr<FileSystem> view = w.fs.NewProcessView();
    Runtime first(config, w.broker, w.clock, *view, w.LogStoreOpenerOn(*view));
    instance = &first;
    // Start creates and locks the application's directory: a crash at that first mutation
    // kills the process before it started (the lock through its dead view then fails).
    const absl::Status started = first.Start();
    RS_CHECK(started.ok() || crashed, "{}", started.ToString());
    if (phase == Phase::kProcessing) {
      AwaitConverged(env, w, MembersOf(first, config), partitions);
      for (int32_t q = 0; q < partitions; ++q) {
        ProduceInput(w, env.random, q, 20 + static_cast<int>(env.Choose(60)));
      }
      processing = true;
    }
    switch (crash_at) {
      case CrashAt::kQuiescent:
        AwaitConverged(env, w, MembersOf(first, config), partitions);
        break;
      case CrashAt::kMutation: {
        // A phase that ends before its drawn mutation ends in a crash at once.
        const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
        while (!crashed && w.clock.NowNs() < deadline &&
               (phase != Phase::kRestoring || !AllThreadsRunning(first))) {
          w.clock.SleepFor(phase == Phase::kAny ? 5 * kMillisecond : kMillisecond);
        }
        break;
      }
      case CrashAt::kTime:
        w.clock.SleepFor(crash_time_ns);
        break;
    }
    crash();
    // The crashed process is gone: reap its threads without a clean close. What they still
    // do meanwhile reaches the broker (and counts in the reference below) but not the disk.
    for (size_t i = 0; i < first.thread_count(); ++i) {
      const std::string who = first.thread(i).name();
      ShutdownWithin(env, w, who, kShutdownTimeoutNs, [&](TimeNs t) {
        (void)first.thread(i).Shutdown(t, /*clean=*/false);  // fails: its view is dead
        return absl::OkStatus();
      });
    }
    // Every thread stopped: Close only moves the state to NOT_RUNNING. A crash leaves nothing
    // open either.
    (void)first.Close(kShutdownTimeoutNs);
    w.oracle.CheckFinal();
  }
  w.fs.SetBeforeMutationHook({});
  w.fs.SetDamage({});  // one crash, one dose of damage
  Baselines baselines = BaselinesNow(w, partitions);
  const auto committed = w.broker.CommittedOffsets("app");
  for (auto& [q, base] : baselines) {
    auto it = committed.find(testing::Input(q));
    base.input_from = it == committed.end() ? 0 : it->second;
  }
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input_after);
  std::unique_ptr<FileSystem> view = w.fs.NewProcessView();
  Runtime again(config, w.broker, w.clock, *view, w.LogStoreOpenerOn(*view));
  RS_CHECK(again.Start().ok());
  FinishRuntime(env, w, again, config, partitions, baselines);
}

void CrashRestartWithStateDir(RunEnv& env) { CrashAndRestart(env, /*with_damage=*/false); }

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

// scenario.storage_damage_while_processing
//   The damage story once restoration is over: every thread runs, more input arrives, and the
//   crash comes at a drawn mutation made while that input is processed (store flushes at
//   commit, periodic checkpoints, exactly-once's commit points).
//   Must hold: as scenario.storage_damage_while_restoring; input the crashed instance processed
//   but did not commit counts twice under at-least-once, never under exactly-once.
void StorageDamageWhileProcessing(RunEnv& env) {
  CrashAndRestart(env, /*with_damage=*/true, Phase::kProcessing);
}

}  // namespace

absl::Status RegisterCrashScenarios(sim::ProgramRegistry& registry) {
  return AddAll(registry,
                {
                    sim::Program{.name = "scenario.crash_restart_with_state_dir",
                                 .description = "an instance crashes (unsynced writes lost) and "
                                                "a new one restarts from the disk's checkpoints",
                                 .steps_hint = 4'000,
                                 .steps_max = 2'000'000,
                                 .body = CrashRestartWithStateDir},
                    sim::Program{.name = "scenario.crash_with_storage_damage",
                                 .description = "a crash also tears, loses, flips or zeroes "
                                                "written data or drops an entry; the restarted "
                                                "instance detects it and restores",
                                 .steps_hint = 4'000,
                                 .steps_max = 2'000'000,
                                 .body = CrashWithStorageDamage},
                    sim::Program{.name = "scenario.storage_damage_while_restoring",
                                 .description = "a crash with storage damage while a stream "
                                                "thread restores; the restart restores again",
                                 .steps_hint = 8'000,
                                 .steps_max = 2'000'000,
                                 .body = StorageDamageWhileRestoring},
                    sim::Program{.name = "scenario.storage_damage_while_processing",
                                 .description = "a crash with storage damage while restored "
                                                "tasks process input; the restart recovers",
                                 .steps_hint = 8'000,
                                 .steps_max = 2'000'000,
                                 .body = StorageDamageWhileProcessing},
                });
}

}  // namespace restoresim::scenarios
