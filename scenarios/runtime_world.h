// Test helpers for runtime parts run against the fake broker under the simulator: a world with
// a broker, a crash-model file system and task factories.
#ifndef RESTORESIM_SCENARIOS_RUNTIME_WORLD_H_
#define RESTORESIM_SCENARIOS_RUNTIME_WORLD_H_

#include <fmt/format.h>

#include <memory>
#include <set>
#include <string>

#include "core/events/event_recorder.h"
#include "core/runtime/assignment_info.h"
#include "core/runtime/count_topology.h"
#include "core/runtime/state_manager.h"
#include "core/runtime/stream_thread.h"
#include "core/runtime/task.h"
#include "core/state/log_store.h"
#include "core/util/check.h"
#include "fakes/fake_broker.h"
#include "fakes/mem_file_system.h"
#include "properties/oracle.h"
#include "scenarios/sim_oracle_host.h"
#include "sim/choice_random.h"
#include "sim/simulation.h"
#include "sim/virtual_clock.h"

namespace restoresim::testing {

inline TopicPartition Changelog(int32_t p) { return {"app-counts-changelog", p}; }
// The changelog of `store` ("counts", "latest") of task 0_p.
inline TopicPartition ChangelogOf(std::string_view store, int32_t p) {
  return {ChangelogTopic("app", store), p};  // "app-<store>-changelog"
}
inline TopicPartition Input(int32_t p) { return {"input", p}; }

// A member's assignment: these input partitions active, these tasks as standbys.
inline Assignment Assign(const std::set<int32_t>& actives, const std::set<int32_t>& standbys) {
  Assignment a;
  for (int32_t p : actives) a.partitions.push_back(Input(p));
  AssignmentInfo info;
  for (int32_t p : standbys) info.standby_tasks.insert(TaskId{0, p});
  a.user_data = info.Encode();
  return a;
}

// Every world runs with the invariant oracle installed (unless Oracle::SetEnabled(false)):
// everything the runtime does in it becomes an event (the recorder) that the oracle checks as
// it happens. The oracle and its recorder are the first members, so they outlive every part
// that reports to them.
//
// REQUIRES: constructed on a simulated thread.
struct RuntimeWorld {
  SimOracleHost oracle_host{*static_cast<sim::Simulation*>(CurrentSim())};
  properties::Oracle oracle{oracle_host};
  events::EventRecorder recorder{
      oracle, events::RecorderOptions{.log_start = [this](const TopicPartition& tp) {
        return broker.PeekLogStartOffset(tp);
      }}};
  std::optional<ScopedObserver> observing{
      properties::Oracle::Enabled() ? std::optional<ScopedObserver>(std::in_place, &recorder)
                                    : std::nullopt};
  sim::VirtualClock clock;
  sim::ChoiceRandom faults_random{*static_cast<sim::Simulation*>(CurrentSim())};
  fakes::FakeBroker broker;
  // Storage faults are off (no draws) until a scenario sets rates (fs.SetFaults).
  fakes::MemFileSystem fs{&faults_random};
  uint64_t next_incarnation = 1;
  // The topology's stores: "counts", and "latest" for tasks with two stores on two changelogs.
  std::vector<std::string> stores;

  // Every network call costs request_latency_ns of virtual time, so restoration takes time
  // and the stream thread's loop interleaves with it as it would on a real network.
  explicit RuntimeWorld(bool faults, int32_t partitions = 4,
                        TimeNs request_latency_ns = kMillisecond,
                        std::vector<std::string> store_names = {"counts"})
      : broker(clock, &faults_random,
               faults ? fakes::BrokerFaults::Moderate() : fakes::BrokerFaults{},
               fakes::BrokerOptions{.request_latency_ns = request_latency_ns}),
        stores(std::move(store_names)) {
    // The oracle sees every record appended (the changelogs' whole history) and every crash.
    broker.SetAppendObserver([this](const TopicPartition& tp, const ConsumerRecord& r) {
      if (observing.has_value()) recorder.OnAppend(tp, r);
    });
    fs.SetCrashObserver([this]() {
      if (observing.has_value()) recorder.OnCrash();
    });
    broker.SetAbortObserver([this](const TopicPartition& tp, int64_t first, int64_t end) {
      if (observing.has_value()) recorder.OnAbort(tp, first, end);
    });
    for (const std::string& store : stores) {
      RS_CHECK(broker.CreateTopic(fmt::format("app-{}-changelog", store), partitions).ok());
    }
    RS_CHECK(broker.CreateTopic("input", partitions).ok());
  }

  // Stores of this world: LogStores in its crash-model file system.
  StoreOpener LogStoreOpener() {
    return [this](const std::string& dir,
                  const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
      auto store = LogStore::Open(fs, dir, name);
      if (!store.ok()) return store.status();
      return std::unique_ptr<KeyValueStore>(std::move(*store));
    };
  }

  // A stream thread of application "app" reading topic "input", state under /state/<name>.
  StreamThreadConfig StreamConfig(std::string name) {
    StreamThreadConfig c;
    c.name = std::move(name);
    c.group = "app";
    c.records_per_task_max = 10;
    c.poll_timeout_ns = 20 * kMillisecond;
    c.tasks.application_id = "app";
    c.tasks.input_topic = "input";
    c.tasks.state_dir = "/state/" + c.name + "/app";
    c.tasks.fs = &fs;
    c.tasks.open_store = LogStoreOpener();
    c.tasks.store_names = stores;
    // Changelogs of tens of records: checkpoint on any progress (Kafka: past 10 000 records).
    c.tasks.checkpoint_offset_delta_min = 0;
    c.restore.checkpoint_offset_delta_min = 0;
    return c;
  }

  std::unique_ptr<StateManager> NewStateManager(int32_t partition, TaskType type) {
    StateManagerConfig c;
    c.application_id = "app";
    c.task_dir = fmt::format("/state/app/0_{}", partition);
    c.fs = &fs;
    c.open_store = LogStoreOpener();
    c.store_names = stores;
    auto sm = std::make_unique<StateManager>(TaskId{0, partition}, type, std::move(c));
    RS_CHECK(sm->RegisterStores().ok());
    return sm;
  }

  std::unique_ptr<Task> NewTask(int32_t partition, TaskType type) {
    return std::make_unique<Task>(TaskIncarnation{{0, partition}, next_incarnation++},
                                  NewStateManager(partition, type), Input(partition));
  }

  // Appends n changelog updates (every fifth a tombstone) to the changelog of every store of
  // the topology (or of `store` only).
  void WriteChangelog(int32_t partition, int n, int start = 0, std::string_view store = "") {
    for (const std::string& name : stores) {
      if (!store.empty() && name != store) continue;
      const TopicPartition changelog = ChangelogOf(name, partition);  // once, not per record
      for (int i = start; i < start + n; ++i) {
        std::optional<std::string> value;
        if (i % 5 != 4) value = std::to_string(i);
        RS_CHECK(broker.Append(changelog, "k" + std::to_string(i % 7), value, i).ok());
      }
    }
  }

  // Puts what restoring the first `offset` records of partition p's changelog would (its fold)
  // into `sm`'s store and advances it there, as an earlier instance that restored them before
  // a clean close would have left it (a checkpoint never claims more than the store holds).
  void RestoreInto(StateManager& sm, int32_t partition, int64_t offset) {
    for (const std::string& name : sm.StoreNames()) {
      const TopicPartition tp = ChangelogOf(name, partition);
      KeyValueStore* store = sm.StoreForChangelog(tp);
      RS_CHECK(store != nullptr);
      for (const auto& [key, value] :
           FoldChangelog(*broker.ReadLog(tp, 0, static_cast<size_t>(offset)))) {
        RS_CHECK(store->Put(key, value).ok());
      }
      sm.Advance(tp, offset);
    }
  }

  // Writes changelog `tp`'s records [from, to) into `sm`'s store of it, as a restored batch
  // would (the position is not advanced: tests report the batch themselves).
  void ApplyBatch(StateManager& sm, const TopicPartition& tp, int64_t from, int64_t to) {
    RS_CHECK(from >= 0 && from <= to, "batch [{}, {})", from, to);
    KeyValueStore* store = sm.StoreForChangelog(tp);
    RS_CHECK(store != nullptr, "no store of {}", tp.ToString());
    absl::StatusOr<std::vector<ConsumerRecord>> records =
        broker.ReadLog(tp, from, static_cast<size_t>(to - from));
    RS_CHECK(records.ok(), "{}", records.status().ToString());
    std::vector<KeyValueWrite> writes;
    for (const ConsumerRecord& record : *records) writes.push_back({record.key, record.value});
    RS_CHECK(store->RestoreBatch(std::move(writes)).ok());
  }

  std::map<std::string, std::string> Fold(int32_t partition) {
    return FoldChangelog(*broker.ReadLog(Changelog(partition), 0, 1'000'000));
  }

  // LogStores in `view`, one runtime instance's view of this world's file system
  // (MemFileSystem::NewProcessView): once the file system crashes, the instance's stores are
  // dead with the rest of its view, and cannot touch what a restarted instance recovers.
  StoreOpener LogStoreOpenerOn(FileSystem& view) {
    return [&view](const std::string& dir,
                   const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
      auto store = LogStore::Open(view, dir, name);
      if (!store.ok()) return store.status();
      return std::unique_ptr<KeyValueStore>(std::move(*store));
    };
  }
};

}  // namespace restoresim::testing

#endif  // RESTORESIM_SCENARIOS_RUNTIME_WORLD_H_
