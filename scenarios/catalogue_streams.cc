// Stories under the streams protocol (KIP-1071, restoresim.group.protocol=streams): the fake
// broker's streams-group coordinator (fakes/fake_streams_group.h), not the scenario, places the
// active and standby tasks, with its sticky task assignor and Kafka's reconciliation timing.
// Two Runtimes a and b of one application, each with its own state directory (so its own
// process: a standby never shares one with its active).
#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// The broker's streams-group settings for the stories: Kafka's minimum heartbeat (500 ms) so a
// rebalance takes a few seconds of virtual time, the test cluster's 10 s session, one standby.
constexpr fakes::StreamsGroupSettings kStreamsSettings{
    .heartbeat_interval_ms = 500, .session_timeout_ms = 10'000, .num_standby_replicas = 1};

RuntimeConfig StreamsConfig(int32_t restore_batch, const std::string& state_dir) {
  RuntimeConfig config = CatalogueRuntimeConfig(1, restore_batch);
  config.state_dir = state_dir;
  config.group_protocol = "streams";
  return config;
}

// The two-instance stories' world: each partition's changelog holds `records` records and its
// input 10 (drawn keys), under the stories' group settings. Returns its baselines.
Baselines PrepareWorld(RunEnv& env, RuntimeWorld& w, int32_t partitions, int records) {
  w.broker.SetStreamsGroupSettings(kStreamsSettings);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  return BaselinesNow(w, partitions);
}

// Runtimes a and b of one application, each with its own state directory and a label only
// (threads "a-StreamThread-1", "b-..."; incarnations numbered apart): no checkpoint is ever
// taken. Start runs a, then b `b_after_ns` later with more input between.
struct TwoInstances {
  TwoInstances(RunEnv& env, RuntimeWorld& w, RuntimeConfig config_a, RuntimeConfig config_b)
      : ca(std::move(config_a)),
        cb(std::move(config_b)),
        a(ca, w.broker, w.clock, w.fs, w.LogStoreOpener()),
        b(cb, w.broker, w.clock, w.fs, w.LogStoreOpener()) {
    RS_CHECK(ca.Validate().ok() && cb.Validate().ok());
    RS_CHECK(a.EnableCheckpointRestore({.instance = "a", .random = &env.random}).ok());
    RS_CHECK(b.EnableCheckpointRestore(
                  {.instance = "b", .random = &env.random, .first_incarnation = 1'000'000})
                 .ok());
  }
  void Start(RunEnv& env, RuntimeWorld& w, int32_t partitions, TimeNs b_after_ns) {
    RS_CHECK(a.Start().ok());
    w.clock.SleepFor(b_after_ns);
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, 10);
    RS_CHECK(b.Start().ok());
  }
  std::vector<Member> MembersOfA() { return MembersOf(a, ca); }
  std::vector<Member> MembersOfB() { return MembersOf(b, cb); }
  void Close(RunEnv& env, RuntimeWorld& w) {
    for (Runtime* r : {&a, &b}) {
      ShutdownWithin(env, w, "runtime " + r->instance(), kShutdownTimeoutNs,
                     [&](TimeNs timeout_ns) { return r->Close(timeout_ns); });
    }
  }

  const RuntimeConfig ca;  // first: a and b keep references to them
  const RuntimeConfig cb;
  Runtime a;
  Runtime b;
};

// scenario.streams_group_places_standbys_and_recycles
//   a starts alone: the coordinator gives it every task active (after its first join created
//   nothing: the changelogs exist). b joins b_after later, most seeds while a still restores its
//   long changelogs in small batches: the coordinator's target splits the actives and puts a
//   standby of each on the other instance. a is asked to revoke the tasks that move and is given
//   them back as standbys in the same response (Kafka's demotion: a recycle, active to
//   standby, while restoring); b gets its actives only once a's heartbeat reported them revoked,
//   and standbys of a's at once.
//   Must hold: the oracle's invariants at every step (no task active on two members, a
//   changelog registered once per restore thread, a type conversion only with nothing
//   registered); at the end every task runs, the standbys caught up, the counts equal the
//   reference model.
void StreamsGroupPlacesStandbysAndRecycles(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 2, 4);
  const int records = draw.Int("records", 20, 169);
  const int32_t batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const TimeNs b_after_ns = draw.Ms("b_after_ms", 0, 1999);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  const Baselines baselines = PrepareWorld(env, w, partitions, records);
  TwoInstances ab(env, w, StreamsConfig(batch, "/state-a"), StreamsConfig(batch, "/state-b"));
  ab.Start(env, w, partitions, b_after_ns);
  std::vector<Member> members = ab.MembersOfA();
  for (const Member& m : ab.MembersOfB()) members.push_back(m);
  AwaitConverged(env, w, members, partitions);
  CheckRunningStores(env, w, members);
  ab.Close(env, w);
  w.oracle.CheckFinal();
  CheckChangelogs(env, w, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.streams_group_places_standbys_and_recycles",
                     .description = "streams protocol: the coordinator splits a's tasks with a "
                                    "joining b, a recycles what moves to standbys",
                     .steps_hint = 20'000,
                     .steps_max = 3'000'000,
                     .body = StreamsGroupPlacesStandbysAndRecycles});

// scenario.streams_member_fenced_while_restoring
//   One Runtime (1-2 threads, each a member of the streams group) restores long changelogs in
//   small batches; 0-59 ms after the start (most seeds: still restoring) the coordinator drops a
//   drawn member as a session timeout would. Its next heartbeat is answered UNKNOWN_MEMBER_ID:
//   the thread reports every partition lost (its restoring tasks closed dirty, taken out of the
//   restore thread), rejoins with the same member id at epoch 0 and is given tasks again (with
//   two threads, the other may hold them meanwhile, and gives them back after revoking them).
//   At-least-once or exactly-once (drawn).
//   Must hold: the oracle's invariants (a lost task is never restored into or checkpointed
//   after its loss, one owner per task); the tail converges; exact counts under exactly-once
//   (its transaction's offsets checked against the member's epoch by the streams group);
//   at-least-once processes a lost task's uncommitted input again, by design.
void StreamsMemberFencedWhileRestoring(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 40, 169);
  const int32_t batch = draw.Int<int32_t>("restore_batch", 2, 6);
  const TimeNs fence_after_ns = draw.Ms("fence_after_ms", 0, 59);
  const bool eos = draw.Bool("exactly_once");
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  w.broker.SetStreamsGroupSettings(kStreamsSettings);
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    ProduceInput(w, env.random, q, 10);
  }
  const Baselines baselines = BaselinesNow(w, partitions);
  RuntimeConfig config = StreamsConfig(batch, "/state");
  config.num_stream_threads = threads;
  if (eos) config.processing_guarantee = "exactly_once_v2";
  RS_CHECK(config.Validate().ok());
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(runtime.Start().ok());
  w.clock.SleepFor(fence_after_ns);
  // Every member has joined by the first heartbeat of each thread (bounded wait).
  std::vector<std::string> members = w.broker.StreamsMembers("app");
  for (int i = 0; i < 1000 && static_cast<int32_t>(members.size()) < threads; ++i) {
    w.clock.SleepFor(kMillisecond);
    members = w.broker.StreamsMembers("app");
  }
  RS_CHECK(!members.empty(), "no streams member joined");
  const std::string fenced = members[env.Choose(members.size())];
  RS_CHECK(w.broker.ExpireStreamsMember("app", fenced).ok());
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, 10);
  FinishRuntime(env, w, runtime, config, partitions, baselines, {.reference_counts = eos});
}
RESTORESIM_SCENARIO({.name = "scenario.streams_member_fenced_while_restoring",
                     .description = "streams protocol: the coordinator drops a member while it "
                                    "restores; it loses its tasks and rejoins",
                     .steps_hint = 20'000,
                     .steps_max = 3'000'000,
                     .body = StreamsMemberFencedWhileRestoring});

// scenario.streams_topology_mismatch_between_members
//   a runs the count topology (store "counts") and holds every task; b, an instance of the same
//   application built with a second store ("counts" and "extra": another changelog), starts
//   b_after later, most seeds while a still restores. The topology of the first member to
//   reach the coordinator becomes the group's (most seeds a's; with b_after near 0 the schedule
//   may let b's first heartbeat in first: POS found it, seed 492), and the coordinator refuses
//   the other's join: its topology differs from the group's at the same epoch (INVALID_REQUEST,
//   as Kafka 4.4 answers it). The refused member's stream thread fails with that error and its
//   instance shuts down (the default handler, SHUTDOWN_CLIENT: Kafka Streams' own answer to a
//   fatal heartbeat error).
//   Must hold: exactly one instance ends in ERROR, its one thread failed; the other never
//   noticed: it keeps every task, converges, and its counts equal the reference model; the
//   oracle's invariants throughout.
void StreamsTopologyMismatchBetweenMembers(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 20, 169);
  const int32_t batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const TimeNs b_after_ns = draw.Ms("b_after_ms", 0, 1999);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  const Baselines baselines = PrepareWorld(env, w, partitions, records);
  RuntimeConfig cb = StreamsConfig(batch, "/state-b");
  cb.store_names = {"counts", "extra"};
  TwoInstances ab(env, w, StreamsConfig(batch, "/state-a"), std::move(cb));
  ab.Start(env, w, partitions, b_after_ns);
  Runtime& a = ab.a;
  Runtime& b = ab.b;
  auto refused = [&]() {
    return (a.state() == RuntimeState::kError) + (b.state() == RuntimeState::kError);
  };
  const TimeNs refused_by_ns = DeadlineAfter(w.clock.NowNs(), 60 * kSecond);
  while (refused() == 0 && w.clock.NowNs() < refused_by_ns) w.clock.SleepFor(50 * kMillisecond);
  if (refused() != 1) {
    FailInvariant(env, "liveness", "a and b",
                  fmt::format("a is {}, b is {} 60 s after b started: exactly one join must be "
                              "refused and fail its instance",
                              RuntimeStateName(a.state()), RuntimeStateName(b.state())));
  }
  const bool b_refused = b.state() == RuntimeState::kError;
  Runtime& loser = b_refused ? b : a;
  if (loser.threads_failed() != 1) {
    FailInvariant(env, "final_state", loser.instance(),
                  fmt::format("{} thread(s) failed; its one thread must fail on the refusal",
                              loser.threads_failed()));
  }
  TraceMark("cover", b_refused ? "topology mismatch: b refused, a described first"
                               : "topology mismatch: a refused, b described first");
  const std::vector<Member> members = b_refused ? ab.MembersOfA() : ab.MembersOfB();
  AwaitConverged(env, w, members, partitions);
  CheckRunningStores(env, w, members);
  ab.Close(env, w);
  w.oracle.CheckFinal();
  CheckChangelogs(env, w, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.streams_topology_mismatch_between_members",
                     .description = "streams protocol: b describes another topology; the "
                                    "coordinator refuses the later join, the other runs on",
                     .steps_hint = 20'000,
                     .steps_max = 3'000'000,
                     .body = StreamsTopologyMismatchBetweenMembers});

}  // namespace
}  // namespace restoresim::scenarios
