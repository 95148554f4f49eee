#include "scenarios/scenario_fleet.h"

#include <fmt/format.h>

#include "core/runtime/count_topology.h"
#include "core/runtime/state_manager.h"
#include "core/util/check.h"

namespace restoresim::scenarios {

using testing::Assign;
using testing::Changelog;
using testing::Input;
using testing::RuntimeWorld;

namespace {
// A member lost under broker faults may be inside a clean close's commit retries (up to 60 s,
// TaskManagerConfig::close_commit_timeout_ns) and a timed-out request (30 s) before it polls.
constexpr TimeNs kJoinNsMax = 120 * kSecond;
}  // namespace

void ProduceInput(RuntimeWorld& w, RandomSource& random, int32_t p, int n) {
  for (int i = 0; i < n; ++i) {
    std::optional<std::string> value;
    if (!random.OneIn(10)) value = std::to_string(1 + random.Uniform(5));
    RS_CHECK(w.broker.Append(Input(p), "k" + std::to_string(random.Uniform(8)), value, i).ok());
  }
}

void LeaveCheckpoint(RuntimeWorld& w, const std::string& state_dir, int32_t p, int64_t offset) {
  StateManagerConfig c;
  c.application_id = "app";
  c.task_dir = fmt::format("{}/{}", state_dir, TaskId{0, p}.ToString());
  c.fs = &w.fs;
  c.open_store = w.LogStoreOpener();
  c.store_names = w.stores;
  StateManager sm(TaskId{0, p}, TaskType::kActive, std::move(c));
  RS_CHECK(sm.RegisterStores().ok());
  if (offset > 0) w.RestoreInto(sm, p, offset);
  RS_CHECK(sm.Close(/*clean=*/true).ok());
  sm.Clear();
}

int64_t HarmlessTruncationMax(RuntimeWorld& w, int32_t p, std::string_view store) {
  const TopicPartition tp = testing::ChangelogOf(store, p);
  const int64_t start = *w.broker.LogStartOffset(tp);
  std::map<std::string, int64_t> last;
  const std::vector<ConsumerRecord> log = *w.broker.ReadLog(tp, start, kLogRecordsMax);
  for (const ConsumerRecord& r : log) last[r.key] = r.offset;
  int64_t harmless = *w.broker.EndOffset(tp);
  for (const auto& [key, offset] : last) harmless = std::min(harmless, offset);
  return harmless;
}

int64_t TruncateHarmlessly(RuntimeWorld& w, int32_t p, int64_t before, std::string_view store) {
  const TopicPartition tp = testing::ChangelogOf(store, p);
  const int64_t start = *w.broker.LogStartOffset(tp);
  if (before <= start) return start;
  const std::vector<ConsumerRecord> log = *w.broker.ReadLog(tp, start, kLogRecordsMax);
  std::set<std::string> deleted_keys;
  std::set<std::string> kept_keys;
  for (const ConsumerRecord& r : log) (r.offset < before ? deleted_keys : kept_keys).insert(r.key);
  for (const std::string& key : deleted_keys) {
    RS_CHECK(kept_keys.contains(key), "truncating {} below {} would lose key {}: not harmless",
             tp.ToString(), before, key);
  }
  RS_CHECK(w.broker.DeleteRecords({{tp, before}}).ok());
  TraceMark("scenario", fmt::format("truncate {} below {}", tp.ToString(), before));
  return before;
}

fakes::BrokerFaults DrawBrokerFaults(sim::RunEnv& env) {
  // The caps of BrokerFaults::Swarm: every fault shows up in a short run, and a retrying
  // client still makes progress.
  const std::pair<uint32_t fakes::BrokerFaults::*, uint64_t> kCaps[] = {
      {&fakes::BrokerFaults::request_timeout_per_mille, 100},
      {&fakes::BrokerFaults::disconnect_per_mille, 200},
      {&fakes::BrokerFaults::slow_fetch_per_mille, 300},
      {&fakes::BrokerFaults::partial_fetch_per_mille, 500},
      {&fakes::BrokerFaults::empty_poll_per_mille, 300},
      {&fakes::BrokerFaults::leader_unavailable_per_mille, 100},
  };
  fakes::BrokerFaults faults;
  for (const auto& [rate, cap] : kCaps) {
    if (env.Choose(2) == 1) faults.*rate = 1 + static_cast<uint32_t>(env.Choose(cap));
  }
  return faults;
}

void NoteParams(const std::string& text) { TraceMark("params", text); }

RuntimeConfig CatalogueRuntimeConfig(int32_t threads, int32_t restore_max_poll_records) {
  RuntimeConfig config;
  config.application_id = "app";
  config.input_topic = "input";
  config.num_stream_threads = threads;
  config.state_dir = "/state";
  config.commit_interval_ms = kCommitIntervalNs / kMillisecond;
  config.poll_ms = kPollNs / kMillisecond;
  config.restore_max_poll_records = restore_max_poll_records;
  config.checkpoint_offset_delta_min = 0;  // tens of records: checkpoint on any progress
  return config;
}

std::vector<Member> MembersOf(Runtime& runtime, const RuntimeConfig& config) {
  std::vector<Member> members;
  for (size_t i = 0; i < runtime.thread_count(); ++i) {
    // A thread replaced after a failure is DEAD: its replacement is the member now.
    if (runtime.thread(i).state() == StreamThreadState::kDead) continue;
    members.push_back(Member{&runtime.thread(i), config.state_dir + "/" + config.application_id});
  }
  return members;
}

// ---- Fleet ----

Fleet::Fleet(RuntimeWorld& w, const FleetOptions& options)
    : w_(w), incarnations_(options.first_incarnation, "fleet_incarnations") {
  RS_CHECK(options.instances >= 1 && options.instances <= 26);
  RS_CHECK(options.threads_per_instance >= 1);
  for (int32_t i = 0; i < options.instances; ++i) {
    directories_.push_back(std::make_unique<StateDirectory>());
    pauses_.push_back(std::make_unique<TopologyPause>());
    const std::string instance(1, static_cast<char>('a' + i));
    for (int32_t t = 0; t < options.threads_per_instance; ++t) {
      StreamThreadConfig c = w.StreamConfig(fmt::format("{}-StreamThread-{}", instance, t + 1));
      c.tasks.state_dir = fmt::format("/state/{}/app", instance);
      c.tasks.directory = directories_.back().get();
      c.tasks.pause = pauses_.back().get();
      c.restore.pause = pauses_.back().get();
      c.poll_timeout_ns = kPollNs;
      c.commit_interval_ns = kCommitIntervalNs;
      c.restore.max_poll_records = options.restore_max_poll_records;
      c.restore.checkpoint_interval_ns = options.checkpoint_interval_ns;
      if (options.open_store) c.tasks.open_store = options.open_store;
      c.tasks.exactly_once = options.exactly_once;
      c.transaction_timeout_ns = options.transaction_timeout_ns;
      state_dirs_.push_back(c.tasks.state_dir);
      instance_of_.push_back(i);
      threads_.push_back(
          std::make_unique<StreamThread>(std::move(c), w.broker, w.clock, nullptr, incarnations_));
    }
  }
}

Fleet::~Fleet() {
  // Threads not shut down by the scenario (a failed run being unwound) are joined by their
  // destructors.
  threads_.clear();
}

void Fleet::SetPaused(int32_t instance, bool paused) {
  RS_CHECK(instance >= 0 && static_cast<size_t>(instance) < pauses_.size(), "no instance {}",
           instance);
  std::vector<std::string> threads;
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (instance_of_[i] != instance) continue;
    threads.push_back(threads_[i]->name());
    threads.push_back(threads_[i]->restore_thread().name());
  }
  TraceMark("scenario", fmt::format("{} instance {}", paused ? "pause" : "resume",
                                    static_cast<char>('a' + instance)));
  pauses_[instance]->Set(paused, threads);
  // As Runtime::Resume: each restore thread is signalled, so an idle one resumes now.
  if (paused) return;
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (instance_of_[i] == instance) threads_[i]->restore_thread().SignalResume();
  }
}

void Fleet::Start() {
  w_.broker.SetManualAssignment("app", true);
  for (auto& t : threads_) t->Start();
  const TimeNs deadline = w_.clock.NowNs() + kJoinNsMax;
  while (w_.broker.Members("app").size() < threads_.size()) {
    RS_CHECK(w_.clock.NowNs() < deadline, "the fleet's threads did not join in time");
    w_.clock.SleepFor(5 * kMillisecond);
  }
  const std::vector<std::string> ids = w_.broker.Members("app");
  for (auto& t : threads_) {
    const std::string prefix = t->name() + "-consumer-";
    auto it = std::find_if(ids.begin(), ids.end(),
                           [&](const std::string& id) { return id.starts_with(prefix); });
    RS_CHECK(it != ids.end(), "no member id for {}", t->name());
    member_ids_.push_back(*it);
  }
}

std::vector<Member> Fleet::members() {
  std::vector<Member> members;
  for (size_t i = 0; i < threads_.size(); ++i) {
    members.push_back({threads_[i].get(), state_dirs_[i]});
  }
  return members;
}

bool Fleet::active(size_t i) {
  const std::vector<std::string> ids = w_.broker.Members("app");
  return std::find(ids.begin(), ids.end(), member_ids_[i]) != ids.end();
}

void Fleet::AwaitAllActive(sim::RunEnv& env) {
  const TimeNs deadline = w_.clock.NowNs() + kJoinNsMax;
  for (size_t i = 0; i < size(); ++i) {
    while (!active(i)) {
      if (w_.clock.NowNs() >= deadline) {
        FailInvariant(env, "liveness", threads_[i]->name(),
                      fmt::format("a lost member did not rejoin its group within {} s",
                                  kJoinNsMax / kSecond));
      }
      w_.clock.SleepFor(5 * kMillisecond);
    }
  }
}

void Fleet::AwaitHandedOver(sim::RunEnv& env, size_t i, const std::set<int32_t>& partitions) {
  const TimeNs deadline = w_.clock.NowNs() + kConvergeNsMax;
  TaskManager& tm = threads_[i]->task_manager();
  for (int32_t p : partitions) {
    const TaskId id{0, p};
    while (!tm.in_restore().contains(id) && !tm.running().contains(id)) {
      if (w_.clock.NowNs() >= deadline) {
        FailInvariant(env, "liveness", id.ToString(),
                      fmt::format("never handed to {}'s restore thread", threads_[i]->name()));
      }
      w_.clock.SleepFor(1 * kMillisecond);
    }
  }
}

absl::Status Fleet::Rebalance(const Generation& generation) {
  RS_CHECK(generation.size() == size());
  std::map<std::string, Assignment> assignments;
  for (size_t i = 0; i < size(); ++i) {
    const MemberAssignment& m = generation[i];
    if (!active(i)) {
      RS_CHECK(m.actives.empty() && m.standbys.empty(), "assignment for lost member {}",
               threads_[i]->name());
      continue;
    }
    assignments[member_ids_[i]] = Assign(m.actives, m.standbys);
  }
  TraceMark("scenario", "rebalance");
  return w_.broker.Rebalance("app", assignments);
}

absl::Status Fleet::Lose(size_t i) {
  TraceMark("scenario", "lose " + threads_[i]->name());
  return w_.broker.LoseMember("app", member_ids_[i]);
}

absl::Status Fleet::Shutdown(TimeNs timeout_ns, bool clean) {
  const TimeNs deadline = w_.clock.NowNs() + timeout_ns;
  absl::Status first;
  for (auto& t : threads_) {
    const TimeNs now = w_.clock.NowNs();
    absl::Status s = t->Shutdown(deadline > now ? deadline - now : 0, clean);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Generation Fleet::Draw(sim::RunEnv& env, int32_t partitions, bool standbys) {
  Generation g(size());
  std::vector<size_t> in_group;
  for (size_t i = 0; i < size(); ++i) {
    if (active(i)) in_group.push_back(i);
  }
  RS_CHECK(!in_group.empty(), "no member left in the group to assign to");
  for (int32_t p = 0; p < partitions; ++p) {
    const size_t owner = in_group[env.Choose(in_group.size())];
    g[owner].actives.insert(p);
    std::vector<size_t> others;
    for (size_t i : in_group) {
      if (instance_of_[i] != instance_of_[owner]) others.push_back(i);
    }
    if (!standbys || others.empty() || env.Choose(2) == 0) continue;
    g[others[env.Choose(others.size())]].standbys.insert(p);
  }
  return g;
}

Generation Fleet::AllOn(size_t active_member, int32_t partitions, bool standbys) const {
  Generation g(size());
  const int32_t instances = instance_of_.back() + 1;
  for (int32_t p = 0; p < partitions; ++p) g[active_member].actives.insert(p);
  if (standbys && instances > 1) {
    const int32_t next = (instance_of_[active_member] + 1) % instances;
    const size_t standby_member = static_cast<size_t>(
        std::find(instance_of_.begin(), instance_of_.end(), next) - instance_of_.begin());
    for (int32_t p = 0; p < partitions; ++p) g[standby_member].standbys.insert(p);
  }
  return g;
}

// ---- the tail ----

void FinishFleet(sim::RunEnv& env, RuntimeWorld& w, Fleet& fleet, int32_t partitions,
                 const Baselines& baselines, const FinishOptions& options) {
  w.broker.SetFaults(fakes::BrokerFaults{});
  TraceMark("scenario", "tail: faults healed, no more rebalances");
  const std::vector<Member> members = fleet.members();
  AwaitConverged(env, w, members, partitions, {.timeout_ns = options.converge_ns_max});
  CheckRunningStores(env, w, members);
  const auto standbys = WantedStandbys(members);
  ShutdownWithin(env, w, "fleet", kShutdownTimeoutNs,
                 [&](TimeNs timeout_ns) { return fleet.Shutdown(timeout_ns); });
  w.oracle.CheckFinal();
  CheckChangelogs(env, w, partitions, baselines);
  CheckStandbys(env, w, standbys, options.standby_lag_records_max);
}

void FinishRuntime(sim::RunEnv& env, RuntimeWorld& w, Runtime& runtime, const RuntimeConfig& config,
                   int32_t partitions, const Baselines& baselines, const FinishOptions& options) {
  w.broker.SetFaults(fakes::BrokerFaults{});
  TraceMark("scenario", "tail: faults healed");
  const std::vector<Member> members = MembersOf(runtime, config);
  AwaitConverged(env, w, members, partitions, {.timeout_ns = options.converge_ns_max});
  CheckRunningStores(env, w, members);
  // The client follows its threads: a thread's move to RUNNING reaches the client's state just
  // after it, so converged threads may briefly leave the client REBALANCING (pos seed 1933 of
  // scenario.corruption_of_one_of_two_stores read it in that gap). Waits a bounded while, and
  // reads the state once for the verdict and its message.
  const TimeNs deadline = w.clock.NowNs() + options.converge_ns_max;
  RuntimeState state = runtime.state();
  while (state != RuntimeState::kRunning && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(kMillisecond);
    state = runtime.state();
  }
  if (state != RuntimeState::kRunning) {
    FailInvariant(env, "liveness", "runtime",
                  fmt::format("runtime in state {} after convergence, not RUNNING",
                              RuntimeStateName(state)));
  }
  ShutdownWithin(env, w, "runtime", kShutdownTimeoutNs,
                 [&](TimeNs timeout_ns) { return runtime.Close(timeout_ns); });
  w.oracle.CheckFinal();
  if (options.reference_counts) CheckChangelogs(env, w, partitions, baselines);
}

}  // namespace restoresim::scenarios
