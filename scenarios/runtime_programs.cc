#include "scenarios/runtime_programs.h"

#include <fmt/format.h>

#include "core/runtime/assignment_info.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/runtime.h"
#include "scenarios/runtime_world.h"
#include "sim/simulation.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::Changelog;
using testing::Assign;
using testing::Input;
using testing::RuntimeWorld;

constexpr int32_t kPartitions = 4;
constexpr TimeNs kConvergeNsMax = 120 * kSecond;

void ProduceInput(RuntimeWorld& w, RandomSource& random, int32_t p, int n) {
  for (int i = 0; i < n; ++i) {
    std::optional<std::string> value;
    if (!random.OneIn(10)) value = std::to_string(1 + random.Uniform(5));
    RS_CHECK(w.broker.Append(Input(p), "k" + std::to_string(random.Uniform(8)), value, i).ok());
  }
}

// The counts a partition's store must hold: its initial changelog, then its input.
std::map<std::string, std::string> Expected(RuntimeWorld& w, int32_t p, int64_t initial) {
  return ReferenceCounts(*w.broker.ReadLog(Input(p), 0, 1'000'000),
                         FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, initial)));
}

// Waits until every input partition is committed to its end, then checks every changelog
// folds to the reference counts.
void ConvergeAndCheck(RunEnv& env, RuntimeWorld& w, const std::map<int32_t, int64_t>& initial) {
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  bool done = false;
  while (!done && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(100 * kMillisecond);
    const auto committed = w.broker.CommittedOffsets("app");
    done = true;
    for (int32_t p = 0; p < kPartitions; ++p) {
      auto it = committed.find(Input(p));
      done = done && it != committed.end() && it->second == *w.broker.EndOffset(Input(p));
    }
  }
  if (!done) {
    const auto committed = w.broker.CommittedOffsets("app");
    std::string lag;
    for (int32_t p = 0; p < kPartitions; ++p) {
      auto it = committed.find(Input(p));
      lag += fmt::format(" {}:{}/{}", p, it == committed.end() ? -1 : it->second,
                         *w.broker.EndOffset(Input(p)));
    }
    env.Fail(fmt::format("input not fully processed and committed within 120 s of virtual "
                         "time; committed/end:{}\n{}",
                         lag, env.sim.ThreadsReport()));
  }
  for (int32_t p = 0; p < kPartitions; ++p) {
    const auto actual = FoldChangelog(*w.broker.ReadLog(Changelog(p), 0, 1'000'000));
    const auto expected = Expected(w, p, initial.at(p));
    if (actual != expected) {
      std::string diff;
      for (const auto& [key, value] : expected) {
        auto it = actual.find(key);
        if (it == actual.end() || it->second != value) {
          diff += fmt::format(" {}: expected {}, found {};", key, value,
                              it == actual.end() ? "nothing" : it->second);
        }
      }
      env.Fail(fmt::format("partition {}: the changelog folds to counts that differ from the "
                           "reference model of the input:{}",
                           p, diff));
    }
  }
}

void RestoreThenProcess(RunEnv& env) {
  RuntimeWorld w(/*faults=*/true, kPartitions);
  std::map<int32_t, int64_t> initial;
  for (int32_t p = 0; p < kPartitions; ++p) {
    initial[p] = static_cast<int64_t>(env.random.Uniform(200));
    w.WriteChangelog(p, static_cast<int>(initial[p]));
    ProduceInput(w, env.random, p, 10 + static_cast<int>(env.random.Uniform(40)));
  }
  RuntimeConfig config;
  config.application_id = "app";
  config.input_topic = "input";
  config.num_stream_threads = 1 + static_cast<int32_t>(env.random.Uniform(2));
  config.state_dir = "/state";
  config.commit_interval_ms = 200;
  config.poll_ms = 20;
  config.restore_max_poll_records = 1 + static_cast<int32_t>(env.random.Uniform(60));
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  if (absl::Status s = runtime.Start(); !s.ok()) env.Fail(std::string(s.message()));
  ConvergeAndCheck(env, w, initial);
  if (runtime.state() != RuntimeState::kRunning) env.Fail("runtime left RUNNING");
  (void)runtime.Close(30 * kSecond);
}


void RebalanceStorm(RunEnv& env) {
  RuntimeWorld w(/*faults=*/false, kPartitions);
  w.broker.SetManualAssignment("app", true);
  std::map<int32_t, int64_t> initial;
  for (int32_t p = 0; p < kPartitions; ++p) {
    initial[p] = static_cast<int64_t>(env.random.Uniform(100));
    w.WriteChangelog(p, static_cast<int>(initial[p]));
    ProduceInput(w, env.random, p, 20);
  }
  Atomic<uint64_t> incarnations(0);
  StreamThread a(w.StreamConfig("instance-a"), w.broker, w.clock, nullptr, incarnations);
  StreamThread b(w.StreamConfig("instance-b"), w.broker, w.clock, nullptr, incarnations);
  a.Start();
  b.Start();
  while (w.broker.Members("app").size() < 2) w.clock.SleepFor(10 * kMillisecond);
  const std::vector<std::string> members = w.broker.Members("app");
  const int rounds = 2 + static_cast<int>(env.random.Uniform(5));
  for (int round = 0; round < rounds; ++round) {
    // Each partition: active on one member, maybe standby on the other (clean moves only).
    std::set<int32_t> act[2], sb[2];
    for (int32_t p = 0; p < kPartitions; ++p) {
      const size_t owner = env.random.Uniform(2);
      act[owner].insert(p);
      if (env.random.OneIn(2)) sb[1 - owner].insert(p);
    }
    RS_CHECK(w.broker.Rebalance("app", {{members[0], Assign(act[0], sb[0])},
                                        {members[1], Assign(act[1], sb[1])}})
                 .ok());
    w.clock.SleepFor(static_cast<TimeNs>(env.random.Uniform(1000)) * kMillisecond);
    for (int32_t p = 0; p < kPartitions; ++p) ProduceInput(w, env.random, p, 5);
  }
  ConvergeAndCheck(env, w, initial);
  (void)a.Shutdown(30 * kSecond);
  (void)b.Shutdown(30 * kSecond);
}

}  // namespace

absl::Status RegisterRuntimePrograms(sim::ProgramRegistry& registry) {
  if (absl::Status s = registry.Add(sim::Program{
          .name = "scenario.restore_then_process",
          .description = "1-2 stream threads restore and process under swarm broker faults",
          .steps_hint = 20'000,
          .steps_max = 5'000'000,
          .body = RestoreThenProcess});
      !s.ok()) {
    return s;
  }
  return registry.Add(sim::Program{
      .name = "scenario.rebalance_storm",
      .description = "two stream threads through seed-drawn clean rebalances and recycles",
      .steps_hint = 40'000,
      .steps_max = 5'000'000,
      .body = RebalanceStorm});
}

}  // namespace restoresim::scenarios
