// The bug programs (bug_programs.h): each mutation in the base scenario that opens its window.
#include <fmt/format.h>

#include "core/util/run_context.h"
#include "scenarios/bug_programs.h"
#include "scenarios/runtime_programs.h"

namespace restoresim::scenarios {
namespace {

// Which scenario each mutation needs, and the invariants that catch it there (docs/ZOO.md says
// why for each).
const std::vector<BugProgram>& Table() {
  static const std::vector<BugProgram>* table = new std::vector<BugProgram>{
      {Mutation::kCreateBeforeClose, "scenario.swap_roles_repeatedly", {"registration"}},
      {Mutation::kEarlyTypeFlip, "scenario.swap_roles_repeatedly", {"registration"}},
      {Mutation::kLatePartitionCapture, "scenario.swap_roles_repeatedly", {"registration"}},
      {Mutation::kPartialUnregisterOnCorruption, "scenario.corruption_of_one_of_two_stores",
       {"registration"}},
      {Mutation::kRevivedNotReadded, "scenario.revive_after_truncation", {"assignment"}},
      {Mutation::kStaleCheckpointAfterCorruption, "scenario.revive_after_truncation",
       {"checkpoint"}},
      {Mutation::kEndInsteadOfSuspended, "scenario.recycle_active_to_standby_while_restoring",
       {"listener_pairing"}},
      {Mutation::kWaitWithoutPredicate, "scenario.shutdown_mid_restoration",
       {"single_owner", "errors", "liveness"}},
      {Mutation::kNoCheckpointAfterRestoration, "scenario.restore_then_process",
       {"checkpoint_progress"}},
      {Mutation::kStalePendingAction, "scenario.two_rebalances_between_polls", {"assignment"}},
      {Mutation::kRunningBeforeInit,
       "scenario.initialisation_retried_during_corruption_and_rebalance", {"running_gate"}},
      {Mutation::kCheckpointEndNotRestored, "scenario.recycle_active_to_standby_while_restoring",
       {"checkpoint"}},
      {Mutation::kRestoredListedTwice, "scenario.restore_then_process", {"single_owner"}},
      {Mutation::kResumeOnRestoreThread, "scenario.restore_then_process",
       {"thread_confinement"}},
      {Mutation::kStandbysResumedEarly, "scenario.standby_promotion_while_actives_restore",
       {"reader_mode"}},
      {Mutation::kIdleWithoutWakeup, "scenario.swap_roles_repeatedly", {"liveness_bounds"}},
      {Mutation::kEventsDrainedLate, "scenario.no_restore_task_with_restoring_task",
       {"liveness_bounds"}},
      {Mutation::kResumeAsRecreate, "scenario.revoke_then_reassign_before_restore_thread_saw_it",
       {"assignment", "no_wasted_work"}},
      {Mutation::kDamagedStoreRetried, "scenario.crash_with_storage_damage", {"liveness"}},
      {Mutation::kDamageCutAsTornTail, "scenario.crash_with_storage_damage",
       {"checkpoint", "store_contents"}},
      {Mutation::kCheckpointKeepsConnections, "scenario.checkpoint_while_restoring",
       {"checkpoint_restore"}},
      {Mutation::kStaleEndOffsetsAfterRestore, "scenario.checkpoint_while_restoring",
       {"checkpoint_restore"}},
      {Mutation::kClonesKeepIdentity, "scenario.clone_restore", {"checkpoint_restore"}},
      {Mutation::kEosRestoreReadUncommitted, "scenario.eos_changelog_tail_aborted",
       {"eos_restored_batch", "store_contents", "checkpoint"}},
      {Mutation::kEosCheckpointWhileProcessing, "scenario.eos_changelog_tail_aborted",
       {"eos_checkpoint"}},
      {Mutation::kStoreOffsetIgnored, "scenario.storage_damage_while_processing",
       {"checkpoint", "store_contents"}},
      {Mutation::kCorruptionFailsThread, "scenario.store_corrupt_while_processing",
       {"liveness"}},
      {Mutation::kEosUncleanStateKept, "scenario.eos_members_lost_at_any_moment",
       {"no_wasted_work", "store_contents"}},
      {Mutation::kResumeWithoutWakeup, "scenario.paused_while_idle_assigned_then_resumed",
       {"liveness_bounds"}},
      {Mutation::kResumeWithoutRegister, "scenario.pause_resume_during_restoration_and_recycle",
       {"registration"}},
      {Mutation::kCloseTimeoutNotRunning, "scenario.close_times_out_then_closes_again",
       {"client_close"}},
      {Mutation::kCloseSentThenStarted, "scenario.restoring_task_moves_and_comes_back",
       {"dead_incarnation"}},
      {Mutation::kRevokedClosedAtRevocation, "scenario.close_and_create_same_round",
       {"no_wasted_work"}},
      {Mutation::kRestoreBatchRecordByRecord, "scenario.storage_faults_on_a_live_instance",
       {"eos_restored_batch", "checkpoint"}},
      {Mutation::kOffsetSumsStale, "scenario.standbys_placed_by_assignor", {"offset_sums"}},
  };
  return *table;
}

}  // namespace

// Built with -Dmutations=disabled, the mutation sites are the correct code: no bug programs.
std::span<const BugProgram> BugPrograms() {
  if (!RESTORESIM_MUTATIONS) return {};
  return Table();
}

std::string BugProgramName(Mutation mutation) {
  std::string name = "bug." + std::string(InfoOf(mutation).name);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

absl::Status RegisterBugScenarios(sim::ProgramRegistry& registry) {
  for (const BugProgram& bug : BugPrograms()) {
    const sim::Program* base = registry.Find(bug.base);
    if (base == nullptr) {
      return absl::NotFoundError(fmt::format("bug program {}: no base scenario {}",
                                             BugProgramName(bug.mutation), bug.base));
    }
    const MutationInfo& info = InfoOf(bug.mutation);
    sim::Program program;
    program.name = BugProgramName(bug.mutation);
    program.description = fmt::format("{} ({}) in {}", info.description, info.source,
                                      bug.base.substr(bug.base.find('.') + 1));
    program.bug_expected = true;
    program.expected_invariants.assign(bug.invariants.begin(), bug.invariants.end());
    program.steps_hint = base->steps_hint;
    program.steps_max = base->steps_max;
    program.body = [body = base->body, mutations = MutationSet{bug.mutation}](sim::RunEnv& env) {
      ScopedMutations installed(mutations);
      body(env);
    };
    if (absl::Status s = registry.Add(std::move(program)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace restoresim::scenarios
