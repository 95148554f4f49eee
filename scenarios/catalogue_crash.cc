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
  kNone = 5,
};

void CrashAndRestart(RunEnv& env, bool with_damage) {
  const int32_t partitions = 1 + static_cast<int32_t>(env.Choose(3));
  const int32_t threads = 1 + static_cast<int32_t>(env.Choose(2));
  const int records = 20 + static_cast<int>(env.Choose(100));
  const int32_t restore_batch = 2 + static_cast<int32_t>(env.Choose(19));
  const int input_before = static_cast<int>(env.Choose(30));
  const int input_after = static_cast<int>(env.Choose(30));
  const auto crash_at = static_cast<CrashAt>(env.Choose(3));
  const uint64_t crash_mutation = env.Choose(300);
  const TimeNs crash_time_ns = static_cast<TimeNs>(env.Choose(60)) * kMillisecond;
  // Drawn only by the damage story, so the plain one keeps its schedules.
  const Damage damage = with_damage ? static_cast<Damage>(env.Choose(5)) : Damage::kNone;
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
  config.checkpoint_interval_ms = 100;
  if (exactly_once) config.processing_guarantee = "exactly_once_v2";
  fakes::MemFileSystemDamage rates;
  switch (damage) {
    case Damage::kTornWrite: rates.torn_write_per_mille = damage_per_mille; break;
    case Damage::kLostWrite: rates.lost_write_per_mille = damage_per_mille; break;
    case Damage::kBitFlip: rates.bit_flip_per_mille = damage_per_mille; break;
    case Damage::kZeroedSector: rates.zeroed_sector_per_mille = damage_per_mille; break;
    // Per durable entry, of which a state directory has many more than files.
    case Damage::kVanishedEntry: rates.vanished_entry_per_mille = damage_per_mille / 5; break;
    case Damage::kNone: break;
  }
  w.fs.SetDamage(rates);
  bool crashed = false;
  auto crash = [&]() {
    if (crashed) return;
    crashed = true;
    TraceMark("scenario", "crash");
    w.fs.Crash();
    const fakes::MemFileSystemDamageDone done = w.fs.last_damage();
    if (done.torn_writes > 0) TraceMark("fault", "damage/torn_write");
    if (done.lost_writes > 0) TraceMark("fault", "damage/lost_write");
    if (done.bit_flips > 0) TraceMark("fault", "damage/bit_flip");
    if (done.zeroed_sectors > 0) TraceMark("fault", "damage/zeroed_sector");
    if (done.vanished_entries > 0) TraceMark("fault", "damage/vanished_entry");
  };
  uint64_t mutations = 0;
  if (crash_at == CrashAt::kMutation) {
    w.fs.SetBeforeMutationHook([&](std::string_view, const std::string&) {
      if (++mutations > crash_mutation) crash();
    });
  }
  {
    std::unique_ptr<FileSystem> view = w.fs.NewProcessView();
    Runtime first(config, w.broker, w.clock, *view, w.LogStoreOpenerOn(*view));
    RS_CHECK(first.Start().ok());
    switch (crash_at) {
      case CrashAt::kQuiescent:
        AwaitConverged(env, w, MembersOf(first, config), partitions);
        break;
      case CrashAt::kMutation: {
        const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
        while (!crashed && w.clock.NowNs() < deadline) w.clock.SleepFor(5 * kMillisecond);
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
                });
}

}  // namespace restoresim::scenarios
