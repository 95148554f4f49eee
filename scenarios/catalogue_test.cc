// The scenario catalogue as a test: every scenario.* program passes a fixed budget of seeds
// under a random walk, PCT (depth 3) and POS; every bug.* program fails within a bound of
// seeds, naming the invariant its planted bug breaks; and a run is a pure function of its
// seed (the same trace hash twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "properties/oracle.h"
#include "scenarios/bug_programs.h"
#include "scenarios/runtime_programs.h"
#include "sim/runner.h"
#include "sim/sweep.h"

namespace restoresim::scenarios {
namespace {

using ::testing::HasSubstr;

// Seeds per scenario and strategy: the whole catalogue takes seconds on 2 cores.
constexpr uint64_t kSeeds = 200;
// A planted bug must be found within this many seeds under pct:3.
constexpr uint64_t kBugSeedsMax = 300;

const sim::ProgramRegistry& Registry() {
  static const sim::ProgramRegistry* registry = []() {
    auto* r = new sim::ProgramRegistry();
    const absl::Status s = RegisterRuntimePrograms(*r);
    if (!s.ok()) {
      ADD_FAILURE() << s;
    }
    return r;
  }();
  return *registry;
}

std::vector<std::string> Names(std::string_view prefix) {
  std::vector<std::string> names;
  for (const sim::Program* p : Registry().All()) {
    if (p->name.starts_with(prefix)) names.push_back(p->name);
  }
  return names;
}

sim::StrategySpec Strategy(std::string_view text) {
  absl::StatusOr<sim::StrategySpec> spec = sim::StrategySpec::Parse(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : sim::StrategySpec{};
}

sim::SweepResult Sweep(const sim::Program& program, std::string_view strategy, uint64_t seeds) {
  sim::SweepConfig config;
  config.programs = {&program};
  config.seeds = seeds;
  config.jobs = 2;
  config.run.strategy = Strategy(strategy);
  return sim::RunSweep(config);
}

std::string Describe(const sim::ProgramSweepStats& stats) {
  std::string text;
  for (const sim::SweepFailure& f : stats.failures) {
    text += "\n  " + f.replay + "\n    " + f.outcome.message.substr(0, 600);
  }
  return text;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.find('.') + 1);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {
 protected:
  const sim::Program& program() { return *Registry().Find(GetParam()); }
};

TEST_P(ScenarioTest, PassesUnderRandomWalkPctAndPos) {
  for (std::string_view strategy : {"random", "pct:3", "pos"}) {
    const sim::SweepResult r = Sweep(program(), strategy, kSeeds);
    ASSERT_EQ(r.programs.size(), 1u);
    EXPECT_EQ(r.programs[0].failed_runs, 0u)
        << GetParam() << " under " << strategy << ":" << Describe(r.programs[0]);
  }
}

TEST_P(ScenarioTest, SameSeedSameTraceHash) {
  sim::RunConfig config;
  config.seed = 7;
  config.strategy = Strategy("pct:3");
  const sim::RunResult a = sim::RunProgram(program(), config);
  const sim::RunResult b = sim::RunProgram(program(), config);
  ASSERT_TRUE(a.outcome.ok()) << a.outcome.message;
  EXPECT_NE(a.trace_hash, 0u);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.end_time_ns, b.end_time_ns);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ScenarioTest, ::testing::ValuesIn(Names("scenario.")),
                         TestName);

TEST(CatalogueTest, HasTheNamedScenarios) {
  for (const char* name : {
           "scenario.recycle_active_to_standby_while_restoring",
           "scenario.recycle_standby_to_active_while_updating",
           "scenario.revive_after_truncation",
           "scenario.close_and_create_same_round",
           "scenario.revoke_then_reassign_before_restore_thread_saw_it",
           "scenario.lost_while_restoring",
           "scenario.two_rebalances_between_polls",
           "scenario.standby_promotion_while_actives_restore",
           "scenario.no_restore_task_with_restoring_task",
           "scenario.shutdown_mid_restoration",
           "scenario.shutdown_mid_rebalance",
           "scenario.standbys_placed_by_assignor",
           "scenario.broker_faults_during_restoration",
           "scenario.crash_restart_with_state_dir",
           "scenario.swarm",
           "scenario.rebalance_storm",
           "scenario.restore_then_process",
           "scenario.swap_roles_repeatedly",
           "scenario.corruption_report_while_revoked",
           "scenario.corruption_of_one_of_two_stores",
           "scenario.initialisation_retried_during_corruption_and_rebalance",
           "scenario.restoring_task_moves_and_comes_back",
           "scenario.storage_faults_on_a_live_instance",
           "scenario.main_consumer_faults_when_restored",
           "scenario.crash_with_storage_damage",
           "scenario.storage_damage_while_restoring",
           "scenario.storage_damage_while_processing",
           "scenario.store_corrupt_while_processing",
           "scenario.eos_corrupted_active_moves_to_its_standby",
           "scenario.store_keeps_failing",
           "scenario.changelog_leader_never_comes_back",
           "scenario.replaced_thread_takes_over",
           "scenario.task_timeout_mid_rebalance",
           "scenario.pause_resume_during_restoration_and_recycle",
           "scenario.paused_while_idle_assigned_then_resumed",
           "scenario.close_times_out_then_closes_again",
       }) {
    const sim::Program* p = Registry().Find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->description.empty()) << name;
    EXPECT_FALSE(p->bug_expected) << name;
  }
}

// The scenario names of docs/SCENARIOS.md's catalogue table (the table headed "| scenario |
// what happens"): the first `...` of each row, "scenario." prefixed.
std::set<std::string> DocumentedScenarios(std::istream& doc) {
  std::set<std::string> names;
  bool in_table = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("| scenario | what happens")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    const size_t open = line.find('`');
    const size_t close = open == std::string::npos ? open : line.find('`', open + 1);
    if (close == std::string::npos) continue;  // the |---| line
    names.insert("scenario." + line.substr(open + 1, close - open - 1));
  }
  return names;
}

TEST(CatalogueDocTest, ParsesTheCatalogueTableOnly) {
  std::istringstream doc(
      "| `not_this` | a table before |\n\n| scenario | what happens | params |\n|---|---|---|\n"
      "| `swarm` | x | y |\n| `clone_restore` ‡ | x | y |\n\n| `nor_this` | after |\n");
  EXPECT_EQ(DocumentedScenarios(doc),
            (std::set<std::string>{"scenario.swarm", "scenario.clone_restore"}));
}

// docs/SCENARIOS.md and the registry agree: a registered scenario without a row, or a row
// naming no registered scenario, fails.
TEST(CatalogueDocTest, EveryScenarioHasARowAndEveryRowAScenario) {
  const std::string path = std::string(RESTORESIM_SOURCE_ROOT) + "/docs/SCENARIOS.md";
  std::ifstream doc(path);
  ASSERT_TRUE(doc.good()) << "cannot read " << path;
  const std::set<std::string> documented = DocumentedScenarios(doc);
  const std::vector<std::string> registered_list = Names("scenario.");
  const std::set<std::string> registered(registered_list.begin(), registered_list.end());
  ASSERT_FALSE(registered.empty());
  for (const std::string& name : registered) {
    EXPECT_TRUE(documented.contains(name)) << name << " has no row in " << path;
  }
  for (const std::string& name : documented) {
    EXPECT_TRUE(registered.contains(name)) << path << " has a row for " << name
                                           << ", which is not registered";
  }
}

// Coverage: the story each scenario tells does happen — in at least one of its first seeds,
// its timeline shows the marks that prove it (task transitions, recycles, revives, injected
// faults, the scenario's own events).
struct CoverageCase {
  std::string program;
  std::vector<std::string> marks;  // each a substring of some mark's text
};

class CoverageTest : public ::testing::TestWithParam<CoverageCase> {};

TEST_P(CoverageTest, TheStoryHappensInSomeSeed) {
  constexpr uint64_t kCoverageSeeds = 200;
  const sim::Program* program = Registry().Find(GetParam().program);
  ASSERT_NE(program, nullptr);
  std::set<std::string> missing(GetParam().marks.begin(), GetParam().marks.end());
  for (uint64_t seed = 0; seed < kCoverageSeeds && !missing.empty(); ++seed) {
    sim::RunConfig config;
    config.seed = seed;
    config.strategy = Strategy("pct:3");
    config.trace_mode = sim::TraceMode::kFull;
    const sim::RunResult r = sim::RunProgram(*program, config);
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    const sim::Trace& trace = r.simulation->trace();
    for (const sim::TraceEvent& e : trace.events()) {
      if (e.kind != sim::TraceKind::kMark) continue;
      const std::string text(trace.MarkText(e.object));
      std::erase_if(missing,
                    [&](const std::string& m) { return text.find(m) != std::string::npos; });
    }
  }
  EXPECT_TRUE(missing.empty()) << "never seen in " << kCoverageSeeds
                               << " seeds: " << ::testing::PrintToString(missing);
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, CoverageTest,
    ::testing::Values(
        // A restoring active recycled to a standby: the restore thread hands it back suspended.
        CoverageCase{"scenario.recycle_active_to_standby_while_restoring",
                     {"active RESTORING -> SUSPENDED", "-> standby", "-> active"}},
        CoverageCase{"scenario.recycle_standby_to_active_while_updating",
                     {"standby RESTORING -> SUSPENDED", "-> active"}},
        CoverageCase{"scenario.standby_promotion_while_actives_restore",
                     {"standby RESTORING -> SUSPENDED", "-> active"}},
        CoverageCase{"scenario.revive_after_truncation", {"scenario/truncate", "task/revive"}},
        CoverageCase{"scenario.close_and_create_same_round",
                     {"task/revive", "task/recycle",
                      "cover/close and create of one task in a round",
                      "cover/running active recycled to a standby"}},
        CoverageCase{"scenario.corruption_report_while_revoked",
                     {"cover/corruption report for an incarnation no longer wanted"}},
        CoverageCase{"scenario.corruption_of_one_of_two_stores",
                     {"cover/corruption of one of a task's changelogs", "task/revive"}},
        CoverageCase{"scenario.initialisation_retried_during_corruption_and_rebalance",
                     {"cover/initialisation retried: directory locked",
                      "cover/initialisation retried: stores failed to open", "task/revive"}},
        CoverageCase{"scenario.restoring_task_moves_and_comes_back",
                     {"cover/restored after its CLOSE was sent",
                      "cover/restored after its CLOSE was sent, wanted again"}},
        CoverageCase{"scenario.storage_faults_on_a_live_instance",
                     {"cover/checkpoint write failed", "cover/store flush failed",
                      "cover/restored batch's write failed: seek back to the store"}},
        CoverageCase{"scenario.main_consumer_faults_when_restored",
                     {"cover/committed-offset read failed before running",
                      "cover/task timeout started before running"}},
        CoverageCase{"scenario.revoke_then_reassign_before_restore_thread_saw_it",
                     {"active RESTORING -> SUSPENDED", "cover/active removed while restoring"}},
        CoverageCase{"scenario.lost_while_restoring",
                     {"scenario/lose", "active RESTORING -> SUSPENDED"}},
        CoverageCase{"scenario.crash_restart_with_state_dir", {"scenario/crash"}},
        CoverageCase{"scenario.crash_with_storage_damage",
                     {"fault/damage/torn_write", "fault/damage/lost_write",
                      "fault/damage/misdirected_write", "fault/damage/bit_flip",
                      "fault/damage/zeroed_sector", "fault/damage/vanished_entry",
                      "cover/store damaged on open: wiped",
                      "cover/store lost: checkpoint claim withdrawn", "fault/damage/wrong_type",
                      "cover/checkpoint not a regular file: removed"}},
        CoverageCase{"scenario.storage_damage_while_restoring",
                     {"scenario/crash while restoring", "scenario/exactly once",
                      "fault/damage/torn_write", "fault/damage/misdirected_write",
                      "fault/damage/bit_flip", "cover/store damaged on open: wiped"}},
        CoverageCase{"scenario.storage_damage_while_processing",
                     {"scenario/crash while processing", "scenario/exactly once",
                      "fault/damage/lost_write", "fault/damage/zeroed_sector",
                      "fault/damage/vanished_entry", "cover/store damaged on open: wiped",
                      "fault/damage/lost_dir_update", "cover/store behind its checkpoint",
                      "cover/eos store past its checkpoint"}},
        CoverageCase{"scenario.eos_corrupted_active_moves_to_its_standby",
                     {"scenario/exactly once", "fault/store rot",
                      "eos/active task corrupted: rebalance enforced",
                      "cover/corrupted active moved to its caught-up standby"}},
        CoverageCase{"scenario.store_corrupt_while_processing",
                     {"scenario/exactly once", "fault/store rot",
                      "cover/store data loss while processing: task revived",
                      "cover/rotten store wiped and opened empty",
                      "cover/eos transaction lost: aborted"}},
        CoverageCase{"scenario.eos_members_lost_at_any_moment",
                     {"scenario/lose", "cover/eos transaction committed",
                      "cover/eos transaction lost: aborted", "cover/eos transaction aborted",
                      "cover/eos dirty close wiped the task's state"}},
        CoverageCase{"scenario.eos_changelog_tail_aborted",
                     {"transaction/abort marker", "cover/eos checkpoint deleted"}},
        // The broker times a stalled commit's transaction out; its producer is fenced.
        CoverageCase{"scenario.eos_transaction_times_out_during_rebalance",
                     {"scenario/stall", "scenario/lose a while its transaction is open",
                      "transaction timed out after", "eos/transaction lost: producer fenced",
                      "eos/producer re-initialised", "cover/eos dirty close wiped the task's state",
                      "cover/transaction timed out during a rebalance",
                      "cover/new owner restores behind a transaction that times out"}},
        CoverageCase{"scenario.eos_clean_close_restoring_after_revive",
                     {"scenario/exactly once", "transaction/abort marker", "task/revive",
                      "cover/clean close while a revived task restores",
                      "cover/revived task's restoration checkpointed by a clean close",
                      "cover/eos checkpoint deleted"}},
        CoverageCase{"scenario.alos_zombie_write_lands",
                     {"scenario/lose", "cover/zombie write landed after the new owner restored"}},
        CoverageCase{"scenario.eos_crash_with_open_transaction",
                     {"scenario/crash while processing", "cover/crash with a transaction open"}},
        CoverageCase{"scenario.broker_faults_during_restoration",
                     {"fault/request_timeout", "fault/disconnect", "fault/slow_fetch",
                      "fault/partial_fetch", "fault/empty_poll", "fault/leader_unavailable"}},
        // A task directory locked until the initialisation backoff doubled to its cap (10 ms to
        // 1 s): rare (2 of the first 200 seeds), only the swarm's mix of moves gets there.
        CoverageCase{"scenario.swarm",
                     {"scenario/lose", "fault/", "task/recycle", "scenario/rebalance",
                      "cover/initialisation backoff at its cap"}},
        CoverageCase{"scenario.checkpoint_while_restoring",
                     {"cover/frozen: while restoring", "cover/changelog truncated while frozen",
                      "cover/stream thread held at a checkpoint",
                      "cover/restore thread held at a checkpoint", "crac/frozen",
                      "crac/restored"}},
        CoverageCase{"scenario.checkpoint_twice_in_a_row", {"cover/frozen twice in a row"}},
        CoverageCase{"scenario.checkpoint_during_shutdown",
                     {"cover/checkpoint during shutdown abandoned",
                      "cover/checkpoint refused: runtime not running",
                      "cover/frozen: before shutdown"}},
        CoverageCase{"scenario.checkpoint_around_revive",
                     {"cover/frozen: around a revive", "task/revive"}},
        CoverageCase{"scenario.checkpoint_fails_half_way",
                     {"cover/a resource failed the checkpoint", "crac/checkpoint abandoned",
                      "cover/checkpoint abandoned"}},
        CoverageCase{"scenario.checkpoint_during_rebalance", {"cover/frozen: during a rebalance"}},
        CoverageCase{"scenario.clone_restore",
                     {"cover/two clones restored from one image",
                      "cover/corruption report drained at shutdown"}},
        CoverageCase{"scenario.checkpoint_differential", {"cover/differential: frozen"}},
        CoverageCase{"scenario.store_keeps_failing",
                     {"cover/restoration failed: task-scoped store error",
                      "cover/stream thread failed and shut itself down",
                      "cover/client shut down after a thread failed",
                      "cover/SHUTDOWN_APPLICATION handled as SHUTDOWN_CLIENT",
                      "cover/failed task drained at shutdown"}},
        CoverageCase{"scenario.changelog_leader_never_comes_back",
                     {"cover/task timeout started by a retryable error",
                      "cover/task failed: task.timeout.ms expired",
                      "cover/task failed at once: task.timeout.ms is 0"}},
        CoverageCase{"scenario.replaced_thread_takes_over",
                     {"cover/stream thread replaced after a failure"}},
        CoverageCase{"scenario.standbys_placed_by_assignor",
                     {"cover/streams assignor scheduled a probing rebalance",
                      "cover/streams assignor placed a warm-up",
                      "cover/probing rebalance triggered",
                      "cover/probing rebalance moved actives to caught-up instances"}},
        CoverageCase{"scenario.task_timeout_mid_rebalance",
                     {"cover/task failed: task.timeout.ms expired", "scenario/lose",
                      "cover/stream thread replaced after a failure"}},
        // Paused while restoring and updating, moved while paused, resumed.
        CoverageCase{"scenario.pause_resume_during_restoration_and_recycle",
                     {"cover/restoring active paused", "cover/updating standby paused",
                      "cover/task added while its topology is paused",
                      "cover/paused task leaves the restore thread", "cover/paused task resumed",
                      "cover/running active paused", "cover/running active resumed",
                      "cover/close and create of one task in a round"}},
        // Paused while its restore thread idles, assigned new tasks paused, resumed idle.
        CoverageCase{"scenario.paused_while_idle_assigned_then_resumed",
                     {"cover/task added while its topology is paused",
                      "scenario/resume with new actives parked paused",
                      "cover/idle restore thread woken to resume its paused tasks"}},
        // The restore thread pauses for processing (its share while processing, issue 27).
        CoverageCase{"scenario.no_restore_task_with_restoring_task",
                     {"cover/restore thread yielded to processing"}},
        // A close times out while a revocation's commit retries; later closes wait.
        CoverageCase{"scenario.close_times_out_then_closes_again",
                     {"scenario/close while a revocation's commit retries",
                      "cover/close timed out: the client stays PENDING_SHUTDOWN",
                      "cover/close after a close that timed out"}}),
    [](const ::testing::TestParamInfo<CoverageCase>& info) {
      return TestName(::testing::TestParamInfo<std::string>(info.param.program, info.index));
    });

// Every bug program (bug_programs.h: a mutation in the scenario that opens its window) is found
// within a bound of seeds under pct:3, by a failure naming one of its expected invariants.
class BugProgramTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BugProgramTest, FoundWithinBoundNamingItsInvariant) {
  const sim::Program* program = Registry().Find(GetParam());
  ASSERT_NE(program, nullptr);
  EXPECT_TRUE(program->bug_expected);
  EXPECT_FALSE(program->expected_invariants.empty());
  const sim::SweepResult r = Sweep(*program, "pct:3", kBugSeedsMax);
  const sim::ProgramSweepStats& stats = r.programs.at(0);
  EXPECT_GT(stats.found_runs, 0u) << GetParam() << " not found by "
                                  << ::testing::PrintToString(program->expected_invariants)
                                  << " in " << kBugSeedsMax << " seeds ("
                                  << stats.failed_runs << " other failures):"
                                  << Describe(stats);
}

// With the oracle off (`restoresim bench sim` measures runs that way) nothing stops a mutated
// run at the invariant it breaks, and the run goes on into what the bug leads to: that must be
// a failure the run reports, never a crash of the process. (bug.partial_unregister_on_corruption
// crashed here, SIGSEGV: its restore thread wrote into a store its task had already closed.)
TEST_P(BugProgramTest, WithTheOracleOffFailsWithoutCrashing) {
  const sim::Program* program = Registry().Find(GetParam());
  ASSERT_NE(program, nullptr);
  properties::Oracle::SetEnabled(false);
  const sim::SweepResult r = Sweep(*program, "pct:3", 50);
  properties::Oracle::SetEnabled(true);
  EXPECT_EQ(r.programs.at(0).runs, 50u);
}

std::vector<std::string> BugProgramNames() {
  std::vector<std::string> names;
  for (const BugProgram& bug : BugPrograms()) names.push_back(BugProgramName(bug.mutation));
  return names;
}

// Each named after its source and mutation: Zoo/BugProgramTest.FoundWithinBoundNamingItsInvariant/
// KAFKA_10391_stale_checkpoint_after_corruption, PR_8988_review_create_before_close, ...
std::string SourceTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (const BugProgram& bug : BugPrograms()) {
    if (BugProgramName(bug.mutation) == info.param) {
      const MutationInfo& m = InfoOf(bug.mutation);
      name = std::string(m.source) + "_" + std::string(m.name);
    }
  }
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Zoo, BugProgramTest, ::testing::ValuesIn(BugProgramNames()),
                         SourceTestName);

// Every bug program is in the table, and nothing else is bug_expected among the runtime's.
TEST(CatalogueTest, BugProgramsComeFromTheTable) {
  std::set<std::string> from_table;
  for (const BugProgram& bug : BugPrograms()) {
    EXPECT_TRUE(from_table.insert(BugProgramName(bug.mutation)).second)
        << "two rows for " << InfoOf(bug.mutation).name;
  }
  for (const sim::Program* p : Registry().All()) {
    if (p->bug_expected) {
      EXPECT_TRUE(from_table.contains(p->name)) << p->name;
    }
  }
}

}  // namespace
}  // namespace restoresim::scenarios
