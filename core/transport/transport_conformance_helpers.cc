#include "core/transport/transport_conformance_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

namespace restoresim {

void PrintTo(const TopicPartition& partition, std::ostream* os) { *os << partition.ToString(); }

void PrintTo(const TransportTestEnvFactory& factory, std::ostream* os) {
  *os << factory()->Describe();
}

namespace conformance {
namespace {

// A real cluster propagates a new topic's metadata asynchronously: wait this often, this long.
constexpr int kMetadataWaitsMax = 100;
constexpr TimeNs kMetadataWaitNs = 100 * kMillisecond;
constexpr TimeNs kFlushTimeoutNs = 10 * kSecond;

// Checks one successful poll and adds it to `polled`. `next_offset`: where each partition's
// next batch must start.
void CheckPoll(const TransportTestEnv& env, PollResult result, int32_t max_poll_records,
               std::map<TopicPartition, int64_t>& next_offset, Polled& polled) {
  EXPECT_LE(result.RecordCount(), static_cast<size_t>(max_poll_records)) << env.Describe();
  for (size_t i = 1; i < result.partitions.size(); ++i) {
    EXPECT_LT(result.partitions[i - 1].partition, result.partitions[i].partition)
        << env.Describe() << ": partitions of a poll are ordered, each once";
  }
  for (PartitionRecords& batch : result.partitions) {
    if (batch.records.empty()) continue;
    const TopicPartition& tp = batch.partition;
    const int64_t first = batch.records.front().offset;
    for (size_t j = 0; j < batch.records.size(); ++j) {
      EXPECT_EQ(batch.records[j].offset, first + static_cast<int64_t>(j))
          << env.Describe() << ": offsets of " << tp.ToString() << " are consecutive";
    }
    if (auto it = next_offset.find(tp); it != next_offset.end()) {
      EXPECT_EQ(first, it->second)
          << env.Describe() << ": " << tp.ToString() << " continues where it left off";
    }
    next_offset[tp] = batch.records.back().offset + 1;
    std::vector<ConsumerRecord>& all = polled.records[tp];
    std::move(batch.records.begin(), batch.records.end(), std::back_inserter(all));
  }
  for (const TopicPartition& tp : result.out_of_range) {
    auto it = std::lower_bound(polled.out_of_range.begin(), polled.out_of_range.end(), tp);
    if (it == polled.out_of_range.end() || *it != tp) polled.out_of_range.insert(it, tp);
  }
}

}  // namespace

std::vector<TestRecord> MakeRecords(const std::string& prefix, int n, int tombstone_every) {
  std::vector<TestRecord> records;
  for (int i = 0; i < n; ++i) {
    TestRecord r;
    r.key = fmt::format("{}-key-{}", prefix, i);
    if (tombstone_every <= 0 || i % tombstone_every != tombstone_every - 1) {
      r.value = fmt::format("{}-value-{}", prefix, i);
    }
    r.timestamp_ms = 1000 + i;
    records.push_back(std::move(r));
  }
  return records;
}

bool CreateTopic(TransportTestEnv& env, Admin& admin, const std::string& topic,
                 int32_t partitions) {
  int attempts = 0;
  absl::Status created = RetryUntilOk(env.clock(), [&]() {
    ++attempts;
    return admin.CreateTopic(topic, partitions);
  });
  // A timed-out attempt may still have created it.
  if (created.code() == absl::StatusCode::kAlreadyExists && attempts > 1) {
    created = absl::OkStatus();
  }
  if (!created.ok()) {
    ADD_FAILURE() << env.Describe() << ": create topic " << topic << ": " << created;
    return false;
  }
  for (int wait = 0; wait < kMetadataWaitsMax; ++wait) {
    absl::StatusOr<int32_t> count =
        RetryUntilOk(env.clock(), [&]() { return admin.PartitionCount(topic); });
    if (count.ok()) {
      EXPECT_EQ(*count, partitions) << env.Describe() << ": topic " << topic;
      return *count == partitions;
    }
    if (count.status().code() != absl::StatusCode::kNotFound) {
      ADD_FAILURE() << env.Describe() << ": partition count of " << topic << ": " << count.status();
      return false;
    }
    env.clock().SleepFor(kMetadataWaitNs);
  }
  ADD_FAILURE() << env.Describe() << ": topic " << topic << " never appeared";
  return false;
}

std::map<TopicPartition, int64_t> Produce(TransportTestEnv& env, Producer& producer,
                                          const TopicPartition& partition,
                                          const std::vector<TestRecord>& records) {
  for (const TestRecord& r : records) {
    absl::Status sent = RetryUntilOk(
        env.clock(), [&]() { return producer.Send(partition, r.key, r.value, r.timestamp_ms); });
    if (!sent.ok()) {
      ADD_FAILURE() << env.Describe() << ": send to " << partition.ToString() << ": " << sent;
      return {};
    }
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> flushed =
      RetryUntilOk(env.clock(), [&]() { return producer.Flush(kFlushTimeoutNs); });
  if (!flushed.ok()) {
    ADD_FAILURE() << env.Describe() << ": flush: " << flushed.status();
    return {};
  }
  return *flushed;
}

size_t Polled::total() const {
  size_t n = 0;
  for (const auto& [tp, batch] : records) n += batch.size();
  return n;
}

Polled PollUntil(TransportTestEnv& env, const PollFn& poll, int32_t max_poll_records,
                 const std::function<bool(const Polled&)>& done) {
  Polled polled;
  std::map<TopicPartition, int64_t> next_offset;
  while (!done(polled) && polled.polls < env.poll_attempts_max()) {
    ++polled.polls;
    absl::StatusOr<PollResult> result = poll(env.poll_timeout_ns());
    if (!result.ok()) {
      if (IsRetryable(result.status())) {
        ++polled.retryable_errors;
        continue;
      }
      ADD_FAILURE() << env.Describe() << ": poll: " << result.status();
      polled.failed = true;
      break;
    }
    CheckPoll(env, std::move(*result), max_poll_records, next_offset, polled);
  }
  return polled;
}

Polled PollRecords(TransportTestEnv& env, const PollFn& poll, int32_t max_poll_records,
                   size_t want) {
  Polled polled =
      PollUntil(env, poll, max_poll_records, [want](const Polled& p) { return p.total() >= want; });
  EXPECT_EQ(polled.total(), want) << env.Describe() << " after " << polled.polls << " polls";
  return polled;
}

PollFn PollOf(RestoreConsumer& consumer) {
  return [&consumer](TimeNs timeout_ns) { return consumer.Poll(timeout_ns); };
}

PollFn PollOf(MainConsumer& consumer) {
  return [&consumer](TimeNs timeout_ns) { return consumer.Poll(timeout_ns); };
}

void RecordingListener::OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) {
  events_.push_back(Event{Event::Kind::kRevoked, partitions});
}

void RecordingListener::OnPartitionsAssigned(const Assignment& assignment) {
  events_.push_back(Event{Event::Kind::kAssigned, assignment.partitions});
}

void RecordingListener::OnPartitionsLost(const std::vector<TopicPartition>& partitions) {
  events_.push_back(Event{Event::Kind::kLost, partitions});
}

std::string RecordingListener::ToString() const {
  std::string out;
  for (const Event& e : events_) {
    const char* kind = e.kind == Event::Kind::kRevoked    ? "revoked"
                       : e.kind == Event::Kind::kAssigned ? "assigned"
                                                          : "lost";
    out += fmt::format("{}{} ", kind, conformance::ToString(e.partitions));
  }
  return out;
}

int64_t ValueOr(const absl::StatusOr<int64_t>& result, int64_t fallback) {
  if (!result.ok()) ADD_FAILURE() << result.status();
  return result.ok() ? *result : fallback;
}

std::vector<TopicPartition> PartitionsOf(const std::string& topic, int32_t count) {
  std::vector<TopicPartition> out;
  for (int32_t p = 0; p < count; ++p) out.push_back(TopicPartition{topic, p});
  return out;
}

std::string ToString(const std::vector<TopicPartition>& partitions) {
  std::string out = "[";
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (i > 0) out += ",";
    out += partitions[i].ToString();
  }
  return out + "]";
}

}  // namespace conformance
}  // namespace restoresim
