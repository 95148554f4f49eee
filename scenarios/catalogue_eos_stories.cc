// Exactly-once stories of issue 21's last section: a transaction the broker times out while the
// group rebalances (Kafka's TransactionCoordinator aborting a transaction open past
// transaction.timeout.ms; Kafka Streams' TaskMigratedException and handleLostAll), and a
// clean close while a revived task restores (Kafka's TaskManager.handleCorruption, then
// KafkaStreams.close with the state updater still restoring).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "core/runtime/runtime.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "scenarios/scenario_dsl.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {
namespace {

using sim::RunEnv;
using testing::RuntimeWorld;

// How long a scenario waits for a moment it sets up (virtual time).
constexpr TimeNs kMomentNsMax = 10 * kSecond;

// A slow disk under one stream thread (a stalled fsync, a long GC pause: the thread is alive
// and holds its transaction, but does nothing): its first file-system mutation made while its
// transaction is open on the broker takes `stall_ns` of virtual time. Under exactly_once_v2
// that mutation is the store flush of a commit, made after the producer's flush appended the
// transaction's records and before the offsets and the commit are sent, so the transaction
// stays open on the broker for the whole stall. Armed once; it stalls at most once.
//
// Thread-safety: simulated code only (one simulated thread runs at a time); the hook runs on
// whichever thread mutates the file system. Outlived by the world it hooks.
class CommitStall {
 public:
  CommitStall(RuntimeWorld& w, std::string thread, std::string transactional_id, TimeNs stall_ns)
      : w_(w),
        thread_(std::move(thread)),
        transactional_id_(std::move(transactional_id)),
        stall_ns_(stall_ns) {
    RS_CHECK(stall_ns_ > 0, "a stall of {} ns", stall_ns_);
  }
  ~CommitStall() { w_.fs.SetBeforeMutationHook({}); }
  CommitStall(const CommitStall&) = delete;
  CommitStall& operator=(const CommitStall&) = delete;

  void Arm() {
    RS_CHECK(state_ == State::kIdle, "a commit stall armed twice");
    state_ = State::kArmed;
    w_.fs.SetBeforeMutationHook([this](std::string_view, const std::string&) { OnMutation(); });
  }
  bool began() const { return state_ == State::kStalled || state_ == State::kOver; }
  bool over() const { return state_ == State::kOver; }

 private:
  enum class State { kIdle, kArmed, kStalled, kOver };

  void OnMutation() {
    if (state_ != State::kArmed || CurrentThreadName() != thread_) return;
    const std::optional<fakes::FakeBroker::TransactionInfo> txn =
        w_.broker.Transaction(transactional_id_);
    if (!txn.has_value() || !txn->ongoing || state_ != State::kArmed) return;
    state_ = State::kStalled;
    TraceMark("scenario", fmt::format("stall {} {} ms with its transaction open", thread_,
                                      stall_ns_ / kMillisecond));
    w_.clock.SleepFor(stall_ns_);
    RS_CHECK(state_ == State::kStalled);
    state_ = State::kOver;
    TraceMark("scenario", fmt::format("stall of {} over", thread_));
  }

  RuntimeWorld& w_;
  const std::string thread_;
  const std::string transactional_id_;
  const TimeNs stall_ns_;
  State state_ = State::kIdle;
};

// Waits (virtual time, bounded) until `done`; whether it came.
template <typename F>
bool AwaitMoment(RuntimeWorld& w, F&& done) {
  const TimeNs deadline = w.clock.NowNs() + kMomentNsMax;
  while (!done()) {
    if (w.clock.NowNs() >= deadline) return false;
    w.clock.SleepFor(kMillisecond);
  }
  return true;
}

// What the group does while a's transaction is open in scenario.eos_transaction_times_out_...
enum class DuringStall : uint64_t {
  kNewGeneration = 0,  // a drawn generation over a and b: some tasks may move, a is still in
  kLoseA = 1,          // a misses its poll interval: lost, b takes every task at once
  kStandbysToB = 2,    // a keeps every task; b gets standbys of them (nothing revoked from a)
};
constexpr uint64_t kDuringStallKinds = 3;

// Whether a changelog holds records above its last stable offset (as of the broker's last
// time-out check): an open transaction the new owner's read_committed restoration cannot pass.
bool OpenTransactionHoldsAChangelog(RuntimeWorld& w, int32_t partitions) {
  for (int32_t q = 0; q < partitions; ++q) {
    const std::vector<ConsumerRecord> log = w.broker.PeekLog(testing::Changelog(q));
    if (!log.empty() && log.back().offset >= w.broker.PeekLastStableOffset(testing::Changelog(q))) {
      return true;
    }
  }
  return false;
}

void RebalanceDuringStall(RunEnv& env, RuntimeWorld& w, Fleet& fleet, DuringStall kind,
                          int32_t partitions, bool standbys) {
  switch (kind) {
    case DuringStall::kNewGeneration:
      TraceMark("scenario", "rebalance while a's transaction is open");
      RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
      return;
    case DuringStall::kLoseA: {
      TraceMark("scenario", "lose a while its transaction is open");
      RS_CHECK(fleet.Lose(kA).ok());
      Generation g(fleet.size());
      for (int32_t q = 0; q < partitions; ++q) g[kB].actives.insert(q);
      RS_CHECK(fleet.Rebalance(g).ok());
      if (OpenTransactionHoldsAChangelog(w, partitions)) {
        TraceMark("cover", "new owner restores behind a transaction that times out");
      }
      return;
    }
    case DuringStall::kStandbysToB: {
      TraceMark("scenario", "rebalance while a's transaction is open");
      RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, /*standbys=*/true)).ok());
      return;
    }
  }
}

// scenario.eos_transaction_times_out_during_rebalance
//   Instances a and b under exactly_once_v2 with a short transaction.timeout.ms (100-500 ms of
//   virtual time, as an application overrides producer.transaction.timeout.ms). a runs every
//   task (b's standbys when drawn); input arrives, a processes it, and its commit stalls (a
//   slow disk: CommitStall) after its producer appended the transaction's records — for the
//   timeout and 1-300 ms more. 0-(stall) ms into the stall the group rebalances: a drawn
//   generation (tasks may move to b, held back until a acknowledges), a lost (b takes every
//   task at once and restores their changelogs, which the open transaction blocks at the last
//   stable offset), or b given standbys while a keeps everything. The broker aborts the
//   transaction once it is open past its timeout (lazily: at b's restore consumer's next
//   read of the last stable offset, or at a's next call) and fences a's producer.
//   Must hold: a's next commit is refused (fenced, or abortable and then fenced) and handled
//   as lost tasks — closed dirty, wiped, the producer re-initialised — never a crash; no
//   aborted record is restored or applied (the oracle: its histories forget what the abort
//   marker took back); the broker did time the transaction out; after the tail every task
//   runs and the counts equal the reference model exactly (a's aborted input is processed
//   again from the last commit, once).
void EosTransactionTimesOutDuringRebalance(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int records = draw.Int("records", 20, 99);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 10);
  const bool standbys = draw.Bool("standbys");
  const TimeNs timeout_ns = draw.Ms("transaction_timeout_ms", 100, 500, 50);
  const TimeNs stall_ns = timeout_ns + draw.Ms("stall_past_timeout_ms", 1, 300);
  const TimeNs rebalance_after_ns = draw.Ms("rebalance_after_ms", 0, stall_ns / kMillisecond - 1);
  const DuringStall during = draw.Enum<DuringStall>("during_stall", kDuringStallKinds);
  const int input = draw.Int("input", 1, 29);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  const Baselines baselines = BaselinesNow(w, partitions);
  CommitStall stall(w, "a-StreamThread-1", "app-a-StreamThread-1", stall_ns);
  Fleet fleet(w, {.restore_max_poll_records = restore_batch,
                  .exactly_once = true,
                  .transaction_timeout_ns = timeout_ns});
  fleet.Start();
  RS_CHECK(fleet.Rebalance(fleet.AllOn(kA, partitions, standbys)).ok());
  AwaitConverged(env, w, fleet.members(), partitions);
  stall.Arm();
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input);
  if (!AwaitMoment(w, [&] { return stall.began(); })) {
    FailInvariant(env, "liveness", "a-StreamThread-1",
                  "never committed a transaction with the new input");
  }
  w.clock.SleepFor(rebalance_after_ns);
  RebalanceDuringStall(env, w, fleet, during, partitions, standbys);
  if (!AwaitMoment(w, [&] { return stall.over(); })) {
    FailInvariant(env, "liveness", "a-StreamThread-1", "its stall never ended");
  }
  fleet.AwaitAllActive(env);  // a lost member rejoins at its next poll
  RS_CHECK(fleet.Rebalance(fleet.Draw(env, partitions, standbys)).ok());
  AwaitConverged(env, w, fleet.members(), partitions);
  const std::optional<fakes::FakeBroker::TransactionInfo> txn =
      w.broker.Transaction("app-a-StreamThread-1");
  if (!txn.has_value() || txn->aborted_by_timeout == 0) {
    FailInvariant(env, "final_state", "app-a-StreamThread-1",
                  "a transaction open past transaction.timeout.ms was never timed out");
  }
  TraceMark("cover", "transaction timed out during a rebalance");
  FinishFleet(env, w, fleet, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_transaction_times_out_during_rebalance",
                     .description = "exactly once: a stalled commit's transaction times out "
                                    "on the broker while the group rebalances",
                     .steps_hint = 8'000,
                     .body = EosTransactionTimesOutDuringRebalance});

// Appends `n` records (keys of the changelog's cycle, values never WriteChangelog's) in one
// transaction of `producer`, committed or aborted.
void WriteStoryTransaction(TransactionalProducer& producer, const TopicPartition& changelog, int n,
                           int first, bool commit) {
  RS_CHECK(producer.BeginTransaction().ok());
  for (int i = first; i < first + n; ++i) {
    RS_CHECK(producer.Send(changelog, fmt::format("k{}", i % 7), std::to_string(200000 + i), 0)
                 .ok());
  }
  RS_CHECK(producer.Flush(kSecond).ok());
  absl::Status ended =
      commit ? producer.CommitTransaction(kSecond) : producer.AbortTransaction(kSecond);
  RS_CHECK(ended.ok(), "{}", ended.ToString());
}

// The transactional tail an earlier owner left on every changelog: transactions of drawn sizes,
// each committed or aborted.
struct StoryTail {
  std::vector<std::pair<int, bool>> transactions;  // (records, committed)

  static StoryTail Draw(Draws& draw) {
    StoryTail tail;
    const int count = draw.Int("transactions", 1, 4);
    std::string text = "tail=";
    for (int i = 0; i < count; ++i) {
      const int n = draw.Int(1, 20);
      const bool committed = draw.Bool();
      tail.transactions.emplace_back(n, committed);
      text += fmt::format("{}{}{}", i == 0 ? "" : "|", n, committed ? "c" : "a");
    }
    draw.Note(text);
    return tail;
  }

  void Write(RuntimeWorld& w, int32_t partitions, int first) const {
    std::unique_ptr<TransactionalProducer> earlier = w.broker.NewTransactionalProducer(
        {.client_id = "earlier-owner", .transactional_id = "earlier-owner"});
    RS_CHECK(earlier->InitTransactions(kSecond).ok());
    for (int32_t q = 0; q < partitions; ++q) {
      int at = first;
      for (const auto& [n, committed] : transactions) {
        WriteStoryTransaction(*earlier, testing::Changelog(q), n, at, committed);
        at += n;
      }
    }
    earlier->Close();
  }
};

// Whether task `id` runs on one of `members`; how many revives they made.
bool RunningOn(const std::vector<Member>& members, TaskId id) {
  for (const Member& m : members) {
    if (m.thread->task_manager().running().contains(id)) return true;
  }
  return false;
}
int64_t RevivedOn(const std::vector<Member>& members) {
  int64_t revived = 0;
  for (const Member& m : members) revived += m.thread->task_manager().stats().revived;
  return revived;
}

// The first runtime of scenario.eos_clean_close_restoring_after_revive: started, 0_0 revived,
// closed cleanly `close_after_ns` later. Returns whether 0_0 was still restoring at the close.
bool RunUntilCloseAfterRevive(RunEnv& env, RuntimeWorld& w, const RuntimeConfig& config,
                              TimeNs close_after_ns, TimeNs close_timeout_ns) {
  Runtime first(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(first.Start().ok());
  const std::vector<Member> members = MembersOf(first, config);
  if (!AwaitMoment(w, [&] { return RevivedOn(members) > 0; })) {
    FailInvariant(env, "liveness", "0_0",
                  "restored from a checkpoint below its changelog's log start, never revived");
  }
  w.clock.SleepFor(close_after_ns);
  const bool restoring = !RunningOn(members, TaskId{0, 0});
  if (restoring) TraceMark("cover", "clean close while a revived task restores");
  ShutdownWithin(env, w, "runtime", close_timeout_ns, [&](TimeNs t) { return first.Close(t); });
  w.oracle.CheckFinal();
  if (first.state() != RuntimeState::kNotRunning) {
    FailInvariant(
        env, "liveness", "runtime",
        fmt::format("state {} after Close, not NOT_RUNNING", RuntimeStateName(first.state())));
  }
  return restoring;
}

// scenario.eos_clean_close_restoring_after_revive
//   Every changelog (60-199 plain records) ends in a transactional tail an earlier owner left:
//   1-4 transactions of 1-20 records, each committed or aborted. A Runtime (1-2 threads) under
//   exactly_once_v2 starts over a state directory where 0_0 has a checkpoint below its
//   changelog's log start (truncated harmlessly) and the other tasks one part-way: 0_0's
//   restoration goes out of range, it is corrupted, closed dirty, wiped and revived, and its
//   new incarnation restores from the log start in batches of 2-5 — across the markers and the
//   aborted records. 0-19 ms after the revive the client is closed cleanly (0.5-2 s timeout),
//   most often while the new incarnation still restores; then a new Runtime restarts over the
//   directory the close left.
//   Must hold: Close returns OK in time, NOT_RUNNING, nothing open; every checkpoint the close
//   wrote names only what its stores restored and hold no aborted record (`checkpoint`,
//   against the committed history; `eos_restored_batch` after every batch of both runtimes);
//   the restart opens the stores the close left (`checkpoint`: as the clean close wrote them),
//   restores on from the checkpoint to the end and counts exactly.
void EosCleanCloseRestoringAfterRevive(RunEnv& env) {
  Draws draw(env);
  const int32_t partitions = draw.Int<int32_t>("partitions", 1, 3);
  const int32_t threads = draw.Int<int32_t>("threads", 1, 2);
  const int records = draw.Int("records", 60, 199);
  const int32_t restore_batch = draw.Int<int32_t>("restore_batch", 2, 5);
  const int64_t checkpoint_at = draw.Int<int64_t>("checkpoint_at", 1, records / 2);
  const int64_t truncate_below =
      draw.Int<int64_t>("truncate_below", checkpoint_at + 1, records - 7);
  const StoryTail tail = StoryTail::Draw(draw);
  const TimeNs close_after_ns = draw.Ms("close_after_ms", 0, 19);
  const TimeNs close_timeout_ns = draw.Ms("close_timeout_ms", 500, 2000, 500);
  const int input = draw.Int("input", 0, 29);
  draw.NoteParams();
  RuntimeWorld w(/*faults=*/false, partitions);
  for (int32_t q = 0; q < partitions; ++q) w.WriteChangelog(q, records);
  tail.Write(w, partitions, records);
  for (int32_t q = 0; q < partitions; ++q) ProduceInput(w, env.random, q, input);
  const Baselines baselines = BaselinesNow(w, partitions);  // the committed folds
  for (int32_t q = 0; q < partitions; ++q) {
    LeaveCheckpoint(w, "/state/app", q, q == 0 ? checkpoint_at : records / 2);
  }
  TruncateHarmlessly(w, 0, truncate_below);
  RuntimeConfig config = CatalogueRuntimeConfig(threads, restore_batch);
  config.processing_guarantee = "exactly_once_v2";
  TraceMark("scenario", "exactly once");
  const bool restoring = RunUntilCloseAfterRevive(env, w, config, close_after_ns,
                                                  close_timeout_ns);
  const std::string checkpoint = "/state/app/0_0/.checkpoint";
  if (restoring && w.fs.Exists(checkpoint)) {
    TraceMark("cover", "revived task's restoration checkpointed by a clean close");
  }
  Runtime again(config, w.broker, w.clock, w.fs, w.LogStoreOpener());
  RS_CHECK(again.Start().ok());
  FinishRuntime(env, w, again, config, partitions, baselines);
}
RESTORESIM_SCENARIO({.name = "scenario.eos_clean_close_restoring_after_revive",
                     .description = "exactly once: a clean close while a revived task restores "
                                    "across aborted transactions; the restart resumes",
                     .steps_hint = 6'000,
                     .body = EosCleanCloseRestoringAfterRevive});

}  // namespace

}  // namespace restoresim::scenarios
