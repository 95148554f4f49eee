// Exactly-once stories (issue 21): the runtime under processing.guarantee=exactly_once_v2, its
// transactions against the fake broker's markers, last stable offset, fencing and time-outs.
#include <fmt/format.h>

#include <memory>

#include "core/util/check.h"
#include "fakes/broker_faults.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"
#include "sim/choice_random.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;


enum class EosEvent : uint64_t {
  kInputOnly = 0,   // input, no rebalance
  kGeneration = 1,  // a drawn generation
  kLoseMember = 2,  // a drawn member lost at once, whatever it is doing
};
constexpr uint64_t kEosEvents = 3;

// scenario.eos_members_lost_at_any_moment
//   Two instances under exactly_once_v2 (one transactional producer per stream thread), 1-3
//   partitions with restored changelogs, standbys when drawn, and 1-5 rounds of input, each
//   with one event: input only, a drawn generation, or a drawn member lost at once — in the
//   middle of a transaction, between a send and its commit, during the new owner's
//   restoration: unlike the at-least-once stories nothing waits for a quiet moment. The
//   fake broker's faults may be on (0 = quiet): Swarm's retryable profile plus the moved
//   transaction coordinator and, when drawn, the fatal ones (producer fenced, transaction timed
//   out at commit).
//   Must hold: every oracle invariant throughout (no aborted record restored or applied: the
//   oracle's histories leave out what abort markers took back); after the fault-free tail every
//   task runs, every store equals the committed fold of its changelog, and the counts equal
//   the reference model exactly — a lost member's processed, uncommitted input never counts
//   twice, and its writes never land (its transaction aborts: a stale generation's offsets are
//   refused, or the broker times it out).
void PlayEosEvent(RunEnv& env, Draws& draw, Fleet& fleet, int32_t partitions, bool standbys) {
  switch (draw.Enum<EosEvent>(kEosEvents)) {
    case EosEvent::kInputOnly:
      break;
    case EosEvent::kGeneration:
      RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
      break;
    case EosEvent::kLoseMember: {
      const size_t lost = draw.Int<size_t>(0, fleet.size() - 1);
      // Someone must stay in the group to take the tasks over.
      if (!fleet.active(0) || !fleet.active(1)) break;
      TraceMark("scenario", fmt::format("lose {} at any moment", fleet.thread(lost).name()));
      RS_CHECK(fleet.Lose(lost).ok());
      RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
      break;
    }
  }
}

void EosMembersLostAtAnyMoment(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 20, 99);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const bool standbys = draw.Bool("standbys");
  const int rounds = draw.Int("rounds", 1, 5);
  const bool faults_on = draw.Bool("faults");
  const bool fatal = faults_on && draw.Bool("fatal_faults");
  sim::ChoiceRandom choices(env.sim);
  const fakes::BrokerFaults faults =
      faults_on ? fakes::BrokerFaults::SwarmWithTransactions(choices, fatal)
                : fakes::BrokerFaults{};
  draw.Note("broker faults: " + faults.ToString());
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch, .exactly_once = true});
  fleet.Start();
  w.broker.SetFaults(faults);
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, standbys)).ok());
  for (int round = 0; round < rounds; ++round) {
    for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, draw.Int(0, 19));
    w.clock.SleepFor(draw.Ms(0, 150, 5));
    PlayEosEvent(env, draw, fleet, partitions, standbys);
  }
  // A lost member rejoins at its next poll; the last generation includes it again.
  fleet.AwaitAllActive(env);
  RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_members_lost_at_any_moment",
                     .description = "exactly once: members lost mid-transaction, mid-restoration, "
                                    "at any moment, with transactional broker faults drawn",
                     .steps_hint = 12'000,
                     .body = EosMembersLostAtAnyMoment});

// What a changelog's tail is in scenario.eos_changelog_tail_aborted.
enum class Tail : uint64_t {
  kAborted = 0,         // an aborted transaction, then its abort marker
  kCommitted = 1,       // a committed transaction: the last offset is its commit marker
  kAbortedTwice = 2,    // a committed transaction, then two aborted ones
};

// Appends `n` records (keys of the changelog's cycle, values marked "txn") in one transaction
// of `producer`, ended by a commit or an abort.
void WriteTransaction(TransactionalProducer& producer, const TopicPartition& changelog, int n,
                      int first, bool commit) {
  RS_CHECK(producer.BeginTransaction().ok());
  for (int i = first; i < first + n; ++i) {
    const std::string value = std::to_string(100000 + i);  // never a value WriteChangelog writes
    RS_CHECK(producer.Send(changelog, fmt::format("k{}", i % 7), value, 0).ok());
  }
  RS_CHECK(producer.Flush(kSecond).ok());
  if (commit) {
    RS_CHECK(producer.CommitTransaction(kSecond).ok());
  } else {
    RS_CHECK(producer.AbortTransaction(kSecond).ok());
  }
}

// scenario.eos_changelog_tail_aborted
//   Each of 1-3 changelogs holds committed plain records and then a transactional tail written
//   by an earlier owner: an aborted transaction (its abort marker is the last offset), a
//   committed one (the last offset is its commit marker), or a committed one and two aborted.
//   A Runtime under exactly_once_v2 (1-2 threads) restores them with its read_committed
//   restore consumer, in batches of 2-20, and processes input.
//   Must hold: restoration completes though the end offset (read_uncommitted, as Kafka reads
//   it: KAFKA-10167) is a marker no record reaches — the consumer's position passes it; no
//   aborted record is ever restored (the oracle's store checks compare with the committed
//   history); after the tail every store equals the committed fold and the counts equal the
//   reference model.
void EosChangelogTailAborted(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 0, 49);
  const int tail_records = draw.Int("tail_records", 1, 20);
  const Tail tail = draw.Enum<Tail>("tail", 3);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 20);
  const int input = draw.Int("input", 0, 29);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  std::unique_ptr<TransactionalProducer> earlier = w.broker.NewTransactionalProducer(
      {.client_id = "earlier-owner", .transactional_id = "earlier-owner"});
  RS_CHECK(earlier->InitTransactions(kSecond).ok());
  for (int32_t q = 0; q < partitions; ++q) {
    w.WriteChangelog(q, records);
    const TopicPartition changelog = testing::ChangelogOf("counts", q);
    WriteTransaction(*earlier, changelog, tail_records, records, tail != Tail::kAborted);
    if (tail == Tail::kAbortedTwice) {
      WriteTransaction(*earlier, changelog, tail_records, records + tail_records, false);
      WriteTransaction(*earlier, changelog, 1, records + 2 * tail_records, false);
    }
    ProduceInput(w, env.random, q, input);
  }
  earlier->Close();
  const Baselines baselines = BaselinesNow(w, partitions);  // the committed folds
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  config.processing_guarantee = "exactly_once_v2";
  Runtime runtime(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(runtime.Start().ok());
  FinishRuntime(env, w, runtime, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_changelog_tail_aborted",
                     .description = "exactly once: changelogs whose tail is an aborted "
                                    "transaction or markers restore to the end, without it",
                     .steps_hint = 6'000,
                     .body = EosChangelogTailAborted});

// scenario.alos_zombie_write_lands
//   The contrast, under at-least-once: a runs 0_0 and processes 1-29 input records; 0-99 ms
//   later — their changelog writes maybe still queued in a's producer — a is lost and b takes
//   0_0 over at once and restores it. a goes on as a zombie until its next poll, and its next
//   commit flushes its producer: those writes may land in the changelog after b restored, which
//   no fencing stops under at-least-once (exactly once aborts them:
//   scenario.eos_members_lost_at_any_moment). The oracle is off for this story: its
//   `checkpoint` and `store_contents` would report the landing, which is what it shows.
//   Must hold: liveness (b runs 0_0, a rejoins, both shut down). A landing is told by counting:
//   more changelog records appended after b's task started running than b wrote (each record b
//   processes writes at most one) — coverage mark "zombie write landed after the new owner
//   restored"; an undercount can only miss a landing, never invent one.
void AlosZombieWriteLands(RunEnv& env) {
  Draws draw(env);
  const int records = draw.Int("records", 10, 59);
  const int input = draw.Int("input", 1, 29);
  const TimeNs lose_after_ns = draw.Ms("lose_after_ms", 0, 99);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, /*partitions=*/1);
  w.observing.reset();  // the oracle would report the landing: this story is about it
  w.WriteChangelog(0, records);
  Fleet fleet(w, {.restore_max_poll_records = 10});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, 1, /*standbys=*/false)).ok());
  AwaitConverged(env, w, fleet.members(), 1);
  ProduceInput(w, env.random, 0, input);
  w.clock.SleepFor(lose_after_ns);
  RS_CHECK(fleet.Lose(kA).ok());
  Generation g(fleet.size());
  g[kB].actives.insert(0);
  RS_CHECK(fleet.Rebalance(g).ok());
  StreamThread& b = fleet.thread(kB);
  const TimeNs deadline = w.clock.NowNs() + kConvergeNsMax;
  while (!b.task_manager().running().contains(TaskId{0, 0}) && w.clock.NowNs() < deadline) {
    w.clock.SleepFor(kMillisecond);
  }
  const int64_t end_at_run = *w.broker.EndOffset(testing::Changelog(0));
  const int64_t processed_at_run = b.records_processed();
  fleet.AwaitAllActive(env);  // a saw its loss: its zombie commit is behind it
  AwaitConverged(env, w, fleet.members(), 1);
  const int64_t appended = *w.broker.EndOffset(testing::Changelog(0)) - end_at_run;
  if (appended > b.records_processed() - processed_at_run) {
    TraceMark("cover", "zombie write landed after the new owner restored");
  }
  (void)fleet.Shutdown(kShutdownTimeoutNs);
}
RESTORESIM_SCENARIO({.name = "scenario.alos_zombie_write_lands",
                     .description = "at least once, the contrast: a lost member's queued "
                                    "changelog writes land after the new owner restored",
                     .steps_hint = 4'000,
                     .body = AlosZombieWriteLands});

}  // namespace

}  // namespace restoresim::scenarios
