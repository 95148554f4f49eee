#include "fakes/restore_loop_programs.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/runtime/count_topology.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_broker.h"
#include "sim/choice_random.h"

namespace restoresim::fakes {
namespace {

using sim::RunEnv;

constexpr int32_t kPartitions = 2;
constexpr int kRecordsPerPartition = 40;
constexpr int kBatchRecords = 8;
constexpr int kRetriesMax = 200;
constexpr TimeNs kPollTimeoutNs = 100 * kMillisecond;
const char* const kTopic = "app-counts-changelog";

TopicPartition Partition(int32_t p) { return TopicPartition{kTopic, p}; }

constexpr TimeNs kBackoffNsMin = 10 * kMillisecond;
constexpr TimeNs kBackoffNsMax = kSecond;

// Retries `call` while it fails with a retryable error, up to kRetriesMax attempts, backing
// off on the clock between attempts (without a backoff, a leaderless partition would burn
// every attempt in zero virtual time).
template <typename Call>
auto Retry(RunEnv& env, std::string_view what, Call&& call) {
  TimeNs backoff_ns = kBackoffNsMin;
  for (int attempt = 1;; ++attempt) {
    if (attempt > 1) {
      env.clock.SleepFor(backoff_ns);
      backoff_ns = std::min(2 * backoff_ns, kBackoffNsMax);
    }
    auto result = call();
    if (result.ok() || !IsRetryable(result.status()) || attempt == kRetriesMax) {
      if (!result.ok()) {
        env.Fail(fmt::format("{} failed after {} attempts: {}", what, attempt,
                             std::string(result.status().message())));
      }
      return result;
    }
  }
}

// Writes kRecordsPerPartition updates and deletes per partition, flushing every batch.
void Produce(RunEnv& env, FakeBroker& broker) {
  std::unique_ptr<Producer> producer = broker.NewProducer("writer");
  for (int i = 0; i < kRecordsPerPartition; ++i) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      const std::string key = fmt::format("k{}", (i * 7 + p) % 5);
      std::optional<std::string> value;
      if (i % 6 != 5) value = std::to_string(i);
      if (absl::Status s = producer->Send(Partition(p), key, value, i); !s.ok()) {
        env.Fail(fmt::format("send: {}", std::string(s.message())));
      }
    }
    if ((i + 1) % kBatchRecords == 0) {
      Retry(env, "flush", [&]() { return producer->Flush(kSecond); });
    }
  }
  producer->Close();
}

// Restores both partitions from the beginning to the end offsets the admin client reports.
std::map<TopicPartition, std::vector<ConsumerRecord>> Restore(RunEnv& env, FakeBroker& broker,
                                                              bool retry) {
  std::unique_ptr<Admin> admin = broker.NewAdmin("restorer-admin");
  std::unique_ptr<RestoreConsumer> consumer = broker.NewRestoreConsumer({.client_id = "restorer"});
  std::vector<TopicPartition> partitions = {Partition(0), Partition(1)};
  const std::map<TopicPartition, int64_t> end =
      *Retry(env, "end offsets", [&]() { return admin->EndOffsets(partitions); });
  RS_CHECK(consumer->Assign(partitions).ok());
  RS_CHECK(consumer->SeekToBeginning(partitions).ok());
  std::map<TopicPartition, std::vector<ConsumerRecord>> restored;
  for (int polls = 0; polls < 10'000; ++polls) {
    bool done = true;
    for (const TopicPartition& tp : partitions) {
      done = done && *consumer->Position(tp) >= end.at(tp);
    }
    if (done) break;
    absl::StatusOr<PollResult> r = consumer->Poll(kPollTimeoutNs);
    if (!r.ok()) {
      if (!retry && IsRetryable(r.status())) break;  // BUG (planted): gives up, "restored"
      if (!IsRetryable(r.status())) env.Fail(std::string(r.status().message()));
      env.clock.SleepFor(kBackoffNsMin);
      continue;
    }
    for (PartitionRecords& pr : r->partitions) {
      for (ConsumerRecord& record : pr.records) {
        if (record.offset < end.at(pr.partition)) restored[pr.partition].push_back(record);
      }
    }
  }
  consumer->Close();
  return restored;
}

void RunRestoreLoop(RunEnv& env, bool retry) {
  sim::ChoiceRandom faults_random(env.sim);
  const BrokerFaults faults = BrokerFaults::Swarm(faults_random);
  FakeBroker broker(env.clock, &faults_random, faults);
  RS_CHECK(broker.CreateTopic(kTopic, kPartitions).ok());
  Thread writer("writer", [&]() { Produce(env, broker); });
  writer.Join();
  std::map<TopicPartition, std::vector<ConsumerRecord>> restored;
  Thread restorer("restorer", [&]() { restored = Restore(env, broker, retry); });
  restorer.Join();
  for (int32_t p = 0; p < kPartitions; ++p) {
    const std::vector<ConsumerRecord> log = *broker.ReadLog(Partition(p), 0, 1'000'000);
    const auto expected = FoldChangelog(log);
    const auto actual = FoldChangelog(restored[Partition(p)]);
    if (actual != expected) {
      auto [a, e] = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
      const std::string where =
          e != expected.end()
              ? fmt::format("key '{}' should be '{}', restored {}", e->first, e->second,
                            a != actual.end() && a->first == e->first
                                ? "'" + a->second + "'"
                                : std::string("nothing"))
              : fmt::format("extra key '{}'", a->first);
      env.Fail(fmt::format("{}: restored {} of {} records; {}", Partition(p).ToString(),
                           restored[Partition(p)].size(), log.size(), where));
    }
  }
}

}  // namespace

absl::Status RegisterRestoreLoopPrograms(sim::ProgramRegistry& registry) {
  if (absl::Status s = registry.Add(sim::Program{
          .name = "fake.restore_loop",
          .description = "restore a changelog from the fake broker under swarm faults, retrying",
          .steps_hint = 600,
          .body = [](sim::RunEnv& env) { RunRestoreLoop(env, /*retry=*/true); }});
      !s.ok()) {
    return s;
  }
  return registry.Add(sim::Program{
      .name = "fake.restore_loop_no_retry",
      .description = "the same restore giving up on a retryable error: faults expose it",
      .bug_expected = true,
      .steps_hint = 600,
      .body = [](sim::RunEnv& env) { RunRestoreLoop(env, /*retry=*/false); }});
}

}  // namespace restoresim::fakes
