#include "sim/chrome_trace.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/port/posix_file_system.h"
#include "core/sync/mutex.h"
#include "core/sync/thread.h"
#include "core/util/prng.h"
#include "sim/simulation.h"
#include "sim/strategy.h"
#include "sim/virtual_clock.h"

namespace restoresim::sim {
namespace {

using nlohmann::json;

std::unique_ptr<Simulation> NewSimulation(uint64_t seed) {
  return std::make_unique<Simulation>(SimOptions{.trace_mode = TraceMode::kFull},
                                      std::make_unique<RandomWalkStrategy>(Prng(seed)));
}

// Two workers increment a counter under "lock_a", yield between rounds and mark progress.
void Workers() {
  Mutex mu("lock_a");
  int counter = 0;
  auto body = [&]() {
    for (int i = 0; i < 3; ++i) {
      MutexLock lock(mu);
      ++counter;
      TraceMark("task", "0_1 RESTORING", counter);
      Yield();
    }
  };
  Thread a("worker-a", body);
  Thread b("worker-b", body);
  a.Join();
  b.Join();
}

// A restore thread's marks as the runtime writes them: two restorations at once, one ended by
// "restored", one by "unregister"; a third never ends.
void Restorations() {
  Thread restore("app-StreamThread-1-restore", []() {
    TraceMark("restore", "register 0_1#1", 1);
    Yield();
    TraceMark("restore", "register 0_2#1", 0);
    Yield();
    TraceMark("restore", "restored 0_1#1", 0);
    Yield();
    TraceMark("restore", "unregister 0_2#1", 0);
    TraceMark("restore", "register 0_3#2", 1);
    Yield();
  });
  restore.Join();
}

// main holds "held" and joins a thread that waits for it: always a deadlock.
void Deadlock() {
  Mutex mu("held");
  MutexLock lock(mu);
  Thread t("waiter", [&]() { MutexLock inner(mu); });
  t.Join();
}

ChromeTraceInfo InfoFor(const RunOutcome& outcome, bool sync_instants = false) {
  return ChromeTraceInfo{.program = "test.workers",
                         .seed = 1,
                         .strategy = "random",
                         .outcome = std::string(OutcomeKindName(outcome.kind)),
                         .message = outcome.message,
                         .sync_instants = sync_instants};
}

struct Exported {
  std::unique_ptr<Simulation> sim;
  RunOutcome outcome;
  std::string text;
  json doc;
};

Exported RunAndExport(void (*program)(), uint64_t seed, bool sync_instants = false) {
  Exported e;
  e.sim = NewSimulation(seed);
  e.outcome = e.sim->Run(program);
  e.text = ChromeTraceJson(*e.sim, InfoFor(e.outcome, sync_instants));
  e.doc = json::parse(e.text);  // throws (fails the test) on invalid JSON
  return e;
}

std::vector<json> EventsWithPhase(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

bool HasInstant(const json& doc, const std::string& name_prefix) {
  for (const json& e : EventsWithPhase(doc, "i")) {
    if (e["name"].get<std::string>().rfind(name_prefix, 0) == 0) return true;
  }
  return false;
}

TEST(ChromeTraceTest, DocumentHasTheObjectFormat) {
  Exported e = RunAndExport(Workers, 1);
  ASSERT_TRUE(e.outcome.ok()) << e.outcome.message;
  ASSERT_TRUE(e.doc.is_object());
  EXPECT_TRUE(e.doc["traceEvents"].is_array());
  // Timestamps are microseconds (one per step): no display unit that would say otherwise.
  EXPECT_FALSE(e.doc.contains("displayTimeUnit"));
  for (const json& m : EventsWithPhase(e.doc, "M")) {
    EXPECT_EQ(m["cat"], "__metadata") << m.dump();  // readers require a category
  }
  const json& meta = e.doc["metadata"];
  EXPECT_EQ(meta["program"], "test.workers");
  EXPECT_EQ(meta["seed"], "1");
  EXPECT_EQ(meta["strategy"], "random");
  EXPECT_EQ(meta["outcome"], "ok");
  EXPECT_EQ(meta["trace_hash"], fmt::format("0x{:016x}", e.sim->trace().Hash()));
  EXPECT_EQ(meta["steps"], e.sim->steps());
}

TEST(ChromeTraceTest, EveryThreadHasANamedSortedTrack) {
  Exported e = RunAndExport(Workers, 1);
  ASSERT_EQ(e.sim->thread_count(), 3u);
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  for (const json& m : EventsWithPhase(e.doc, "M")) {
    if (m["name"] == "thread_name") names[m["tid"]] = m["args"]["name"];
    if (m["name"] == "thread_sort_index") sort_index[m["tid"]] = m["args"]["sort_index"];
  }
  for (SimThreadId t = 0; t < e.sim->thread_count(); ++t) {
    EXPECT_EQ(names[t + 1], e.sim->thread_name(t));
    EXPECT_EQ(sort_index[t + 1], t + 1);
  }
  EXPECT_EQ(names[1], "main");
  EXPECT_EQ(names[2], "worker-a");
  EXPECT_EQ(names[3], "worker-b");
}

TEST(ChromeTraceTest, RunSlicesCoverEveryThreadAndNeverOverlap) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Exported e = RunAndExport(Workers, seed);
    std::vector<json> slices = EventsWithPhase(e.doc, "X");
    std::map<int, int> per_thread;
    for (const json& s : slices) {
      EXPECT_GE(s["dur"].get<int64_t>(), 1);
      EXPECT_TRUE(s["args"].contains("virtual_time_ns"));
      ++per_thread[s["tid"]];
    }
    for (int tid = 1; tid <= 3; ++tid) EXPECT_GT(per_thread[tid], 0) << "seed " << seed;
    std::sort(slices.begin(), slices.end(), [](const json& a, const json& b) {
      return a["ts"].get<int64_t>() < b["ts"].get<int64_t>();
    });
    for (size_t i = 1; i < slices.size(); ++i) {
      const int64_t prev_end =
          slices[i - 1]["ts"].get<int64_t>() + slices[i - 1]["dur"].get<int64_t>();
      EXPECT_LE(prev_end, slices[i]["ts"].get<int64_t>())
          << "seed " << seed << ": " << slices[i - 1].dump() << " overlaps " << slices[i].dump();
    }
    // Every decision starts or continues a slice: the slices span the steps of the run.
    EXPECT_EQ(slices.front()["ts"], 1);
    EXPECT_GE(slices.back()["ts"].get<int64_t>() + slices.back()["dur"].get<int64_t>(),
              static_cast<int64_t>(e.sim->steps()));
  }
}

TEST(ChromeTraceTest, MutexPointsAreInstantsOnlyWhenAskedFor) {
  Exported quiet = RunAndExport(Workers, 3);
  EXPECT_FALSE(HasInstant(quiet.doc, "mutex.lock"));
  EXPECT_TRUE(HasInstant(quiet.doc, "task/0_1 RESTORING")) << "marks stay";
  Exported sync = RunAndExport(Workers, 3, /*sync_instants=*/true);
  EXPECT_LT(quiet.doc["traceEvents"].size(), sync.doc["traceEvents"].size());
}

TEST(ChromeTraceTest, MutexPointsAndMarksAreInstants) {
  Exported e = RunAndExport(Workers, 3, /*sync_instants=*/true);
  EXPECT_TRUE(HasInstant(e.doc, "mutex.lock mutex 'lock_a' #1"));
  EXPECT_TRUE(HasInstant(e.doc, "mutex.unlock mutex 'lock_a' #1"));
  EXPECT_TRUE(HasInstant(e.doc, "spawn worker-a"));
  EXPECT_TRUE(HasInstant(e.doc, "exit"));
  int marks = 0;
  for (const json& i : EventsWithPhase(e.doc, "i")) {
    EXPECT_EQ(i["s"], "t");
    EXPECT_TRUE(i["args"].contains("virtual_time_ns")) << i.dump();
    if (i["name"] == "task/0_1 RESTORING") {
      EXPECT_EQ(i["cat"], "task");
      EXPECT_TRUE(i["tid"] == 2 || i["tid"] == 3) << i.dump();
      ++marks;
    }
  }
  EXPECT_EQ(marks, 6);
}

TEST(ChromeTraceTest, DeadlockProducesAGlobalFailureEvent) {
  Exported e = RunAndExport(Deadlock, 1);
  ASSERT_EQ(e.outcome.kind, RunOutcome::Kind::kDeadlock);
  int failures = 0;
  for (const json& i : EventsWithPhase(e.doc, "i")) {
    if (i["name"] != "FAILURE: deadlock") continue;
    ++failures;
    EXPECT_EQ(i["s"], "g");
    EXPECT_EQ(i["args"]["message"], e.outcome.message);
  }
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(HasInstant(e.doc, "blocked: mutex.lock on mutex 'held' #1"));
  EXPECT_TRUE(HasInstant(e.doc, "blocked: thread.join on thread 'waiter'"));
  EXPECT_EQ(e.doc["metadata"]["outcome"], "deadlock");
}

// A sleeper: virtual time jumps while every thread is blocked.
void Sleeper() {
  VirtualClock clock;
  Thread t("sleeper", [&clock]() { clock.SleepUntil(2'500'000); });
  clock.SleepUntil(1'000'000);
  t.Join();
}

TEST(ChromeTraceTest, TimeJumpsAreCounterSamplesAndTimeoutsInstants) {
  Exported e = RunAndExport(Sleeper, 1);
  ASSERT_TRUE(e.outcome.ok()) << e.outcome.message;
  std::vector<double> samples;
  for (const json& c : EventsWithPhase(e.doc, "C")) {
    EXPECT_EQ(c["name"], "virtual_time_ms");
    EXPECT_EQ(c["pid"], 1);
    samples.push_back(c["args"]["value"].get<double>());
  }
  EXPECT_EQ(samples, (std::vector<double>{0, 1, 2.5}));
  int timeouts = 0;
  for (const json& i : EventsWithPhase(e.doc, "i")) {
    if (i["name"] != "timeout: sleep") continue;
    ++timeouts;
    EXPECT_GT(i["args"]["virtual_time_ns"].get<int64_t>(), 0);
  }
  EXPECT_EQ(timeouts, 2);
  EXPECT_TRUE(HasInstant(e.doc, "blocked: sleep"));
  EXPECT_EQ(e.doc["metadata"]["end_time_ns"], 2'500'000);
}

TEST(ChromeTraceTest, WakesAreInstantsOnTheWakersTrack) {
  int wakes = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Exported e = RunAndExport(Workers, seed);
    for (const json& i : EventsWithPhase(e.doc, "i")) {
      const std::string name = i["name"];
      if (name.rfind("wake ", 0) != 0) continue;
      ++wakes;
      const int woken_tid = i["args"]["woken_tid"];
      EXPECT_EQ(name, "wake " + e.sim->thread_name(static_cast<SimThreadId>(woken_tid - 1)));
      EXPECT_NE(i["tid"], woken_tid);
    }
  }
  EXPECT_GT(wakes, 0);  // joins and lock hand-overs wake threads in some of these schedules
}

TEST(ChromeTraceTest, IdenticalRunsExportIdenticalBytes) {
  for (uint64_t seed : {1, 7, 42}) {
    Exported first = RunAndExport(Workers, seed);
    Exported second = RunAndExport(Workers, seed);
    EXPECT_EQ(first.sim->trace().Hash(), second.sim->trace().Hash());
    EXPECT_EQ(first.text, second.text) << "seed " << seed;
  }
}

TEST(ChromeTraceTest, HashOnlyRunExportsTracksAndMetadata) {
  Simulation sim(SimOptions{}, std::make_unique<RandomWalkStrategy>(Prng(1)));
  const RunOutcome outcome = sim.Run(Workers);
  const json doc = json::parse(ChromeTraceJson(sim, InfoFor(outcome)));
  EXPECT_EQ(doc["metadata"]["trace_mode"], "hash-only");
  EXPECT_TRUE(EventsWithPhase(doc, "X").empty());
  EXPECT_FALSE(EventsWithPhase(doc, "M").empty());
}

TEST(ChromeTraceTest, NamesThatNeedEscapingStayValidJson) {
  Simulation sim(SimOptions{.trace_mode = TraceMode::kFull},
                 std::make_unique<RandomWalkStrategy>(Prng(1)));
  sim.Run([]() {
    Thread t("quote\" back\\ nl\n bad\xff", []() { TraceMark("c\"at", "n\x01me"); });
    t.Join();
  });
  ChromeTraceInfo info = InfoFor(RunOutcome{});
  info.message = "tab\there";
  const json doc = json::parse(ChromeTraceJson(sim, info));
  EXPECT_TRUE(HasInstant(doc, "c\"at/n\x01me"));
}

TEST(ChromeTraceTest, WriteChromeTraceWritesTheFile) {
  Exported e = RunAndExport(Workers, 1);
  PosixFileSystem& fs = *PosixFileSystem::Default();
  const std::string path = testing::TempDir() + "/chrome_trace_test.json";
  ASSERT_TRUE(WriteChromeTrace(fs, path, *e.sim, InfoFor(e.outcome)).ok());
  absl::StatusOr<std::string> contents = fs.ReadFile(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(*contents, e.text);
  EXPECT_TRUE(fs.DeleteFile(path).ok());
}

}  // namespace
}  // namespace restoresim::sim

namespace restoresim::sim {
namespace {

TEST(ChromeTraceTest, EachRestorationIsASliceOnATrackBesideItsRestoreThread) {
  Exported e = RunAndExport(Restorations, 1);
  ASSERT_TRUE(e.outcome.ok()) << e.outcome.message;
  std::map<std::string, json> slices;
  for (const json& x : EventsWithPhase(e.doc, "X")) {
    if (x["cat"] == "restoration") slices[x["name"].get<std::string>()] = x;
  }
  ASSERT_EQ(slices.size(), 3u);
  const json& first = slices["restore 0_1#1"];
  const json& standby = slices["update 0_2#1"];
  const json& last = slices["restore 0_3#2"];
  EXPECT_EQ(first["args"]["ended_by"], "restored");
  EXPECT_EQ(standby["args"]["ended_by"], "unregister");
  EXPECT_EQ(last["args"]["ended_by"], "run ended");
  EXPECT_NE(first["tid"], standby["tid"]) << "overlapping restorations get lanes";
  EXPECT_LT(first["ts"].get<int64_t>(), standby["ts"].get<int64_t>());
  EXPECT_GT(first["ts"].get<int64_t>() + first["dur"].get<int64_t>(),
            standby["ts"].get<int64_t>());
  std::map<int64_t, std::string> names;
  for (const json& m : EventsWithPhase(e.doc, "M")) {
    if (m["name"] == "thread_name") names[m["tid"]] = m["args"]["name"];
  }
  EXPECT_EQ(names[first["tid"]], "app-StreamThread-1-restore restorations");
  EXPECT_EQ(names[standby["tid"]], "app-StreamThread-1-restore restorations (2)");
}

}  // namespace
}  // namespace restoresim::sim

namespace restoresim::sim {
namespace {

// The runtime's marks of one task's life, a rebalance and two faults, as the runtime and the
// fake broker write them (task.cc, stream_thread.cc, broker_faults.cc).
void Story() {
  VirtualClock clock;
  Thread thread("app-StreamThread-1", [&clock]() {
    TraceMark("thread", "app-StreamThread-1 STARTING -> PARTITIONS_ASSIGNED");
    TraceMark("task", "0_1#1 active CREATED -> RESTORING");
    Yield();
    TraceMark("fault", "disconnect");
    TraceMark("fault", "leader_unavailable", 5);  // milliseconds
    Yield();
    TraceMark("task", "0_1#1 active RESTORING -> RUNNING");
    TraceMark("thread", "app-StreamThread-1 PARTITIONS_ASSIGNED -> RUNNING");
    clock.SleepFor(10 * kMillisecond);
    TraceMark("task", "0_1#1 active RUNNING -> SUSPENDED");
    Yield();
    TraceMark("task", "recycle 0_1 -> standby");
    Yield();
  });
  thread.Join();
}

TEST(ChromeTraceTest, TaskStatesRebalancesAndFaultsAreSlices) {
  Exported e = RunAndExport(Story, 1);
  ASSERT_TRUE(e.outcome.ok()) << e.outcome.message;
  std::map<int64_t, std::string> names;
  for (const json& m : EventsWithPhase(e.doc, "M")) {
    if (m["name"] == "thread_name") names[m["tid"]] = m["args"]["name"];
  }
  std::vector<json> task;
  std::map<std::string, json> others;
  for (const json& x : EventsWithPhase(e.doc, "X")) {
    if (x["cat"] == "task") task.push_back(x);
    if (x["cat"] == "rebalance" || x["cat"] == "fault") others[x["name"]] = x;
  }
  std::sort(task.begin(), task.end(),
            [](const json& a, const json& b) { return a["ts"] < b["ts"]; });
  std::vector<std::string> states;
  for (const json& x : task) {
    states.push_back(x["name"]);
    EXPECT_EQ(names[x["tid"]], "task 0_1#1 (active)");
  }
  EXPECT_EQ(states, (std::vector<std::string>{"RESTORING", "RUNNING", "SUSPENDED",
                                              "CLOSED (recycled)"}));
  for (size_t i = 1; i < task.size(); ++i) {
    EXPECT_EQ(task[i - 1]["ts"].get<int64_t>() + task[i - 1]["dur"].get<int64_t>(),
              task[i]["ts"].get<int64_t>())
        << "one state after the other";
  }
  const json& rebalance = others["rebalance app-StreamThread-1"];
  EXPECT_EQ(rebalance["args"]["ended_by"], "-> RUNNING");
  EXPECT_EQ(names[rebalance["tid"]], "rebalances");
  const json& outage = others["leader_unavailable"];
  EXPECT_EQ(outage["args"]["ended_by"], "its time passed") << "5 ms passed in the 10 ms sleep";
  EXPECT_EQ(outage["args"]["value"], 5);
  EXPECT_EQ(others["disconnect"]["dur"], 1);
  EXPECT_NE(names[outage["tid"]].find("faults"), std::string::npos);
}

}  // namespace
}  // namespace restoresim::sim
