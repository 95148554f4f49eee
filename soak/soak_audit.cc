#include "soak/soak_audit.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "core/port/posix_file_system.h"
#include "core/runtime/count_topology.h"
#include "core/state/checkpoint_file.h"
#include "core/state/rocksdb_store.h"
#include "core/util/check.h"
#include "properties/ledger.h"

namespace restoresim::soak {
namespace {

constexpr TimeNs kRetryForNs = 60 * kSecond;
constexpr TimeNs kRetryBackoffNs = 200 * kMillisecond;
constexpr TimeNs kReadTimeoutNs = 120 * kSecond;
constexpr size_t kProblemsMax = 10;

template <typename Call>
auto Retry(Clock& clock, Call&& call) -> decltype(call()) {
  const TimeNs deadline = DeadlineAfter(clock.NowNs(), kRetryForNs);
  auto result = call();
  while (!result.ok() && IsRetryable(result.status()) && clock.NowNs() < deadline) {
    clock.SleepFor(kRetryBackoffNs);
    result = call();
  }
  return result;
}

struct StoreOnDisk {
  std::map<std::string, std::string> contents;
  std::optional<int64_t> offset;  // what its contents reach
};

absl::StatusOr<StoreOnDisk> ReadStore(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(dir, std::string(kCountsStoreName));
  if (!store.ok()) return store.status();
  StoreOnDisk out;
  out.offset = (*store)->CommittedOffset();
  absl::StatusOr<std::map<std::string, std::string>> contents = (*store)->ReadAll();
  (void)(*store)->Close();
  if (!contents.ok()) return contents.status();
  out.contents = std::move(*contents);
  return out;
}

// The store of task 0_<p> in `task_dir` against the changelog `log` (read_committed).
void AuditStore(const AppLayout& app, int32_t p, const std::string& task_dir,
                const std::vector<ConsumerRecord>& log, StoreAudit& audit) {
  const std::string where = fmt::format("{} (task 0_{})", task_dir, p);
  absl::StatusOr<StoreOnDisk> store = ReadStore(task_dir + "/" + std::string(kCountsStoreName));
  if (!store.ok()) {
    audit.problems.push_back(
        fmt::format("{}: store unreadable: {}", where, store.status().ToString()));
    return;
  }
  ++audit.stores;
  const int64_t upto = store->offset.value_or(0);
  properties::ChangelogHistory history;
  for (const ConsumerRecord& r : log) history.Append(r);
  // Each key as of the store's offset or as a later record of it: the contents may run ahead
  // of the offset they record (a dirty close or a memtable flush writes data, not the offset;
  // at least once re-applies the records past it, which only moves keys forward), never
  // behind it, and never hold a value the committed changelog does not.
  const std::string diff = properties::DiffFromHistory(history, upto, /*compacted_below=*/0,
                                                       store->contents, /*or_later=*/true);
  if (!diff.empty()) {
    audit.problems.push_back(fmt::format("{}: store of {} entries differs from {} below its "
                                         "offset {} or later:{}",
                                         where, store->contents.size(),
                                         app.Changelog(p).ToString(), upto, diff));
  }
  const std::string checkpoint_path = task_dir + "/.checkpoint";
  FileSystem& fs = *PosixFileSystem::Default();
  if (!fs.FileExists(checkpoint_path).ok()) return;
  absl::StatusOr<CheckpointOffsets> checkpoint = ReadCheckpoint(fs, checkpoint_path);
  if (!checkpoint.ok()) {
    audit.problems.push_back(fmt::format("{}: checkpoint unreadable: {}", where,
                                         checkpoint.status().ToString()));
    return;
  }
  auto claimed = checkpoint->find(app.Changelog(p));
  if (claimed != checkpoint->end() && claimed->second > upto) {
    audit.problems.push_back(fmt::format("{}: checkpoint claims {} of {}, the store holds {}",
                                         where, claimed->second, app.Changelog(p).ToString(),
                                         upto));
  }
}

}  // namespace

KafkaReader::KafkaReader(Transport& transport, Clock& clock)
    : transport_(transport), clock_(clock), admin_(transport.NewAdmin("soak-reader")) {}

absl::StatusOr<std::vector<ConsumerRecord>> KafkaReader::ReadAll(const TopicPartition& tp,
                                                                 IsolationLevel isolation) {
  return Retry(clock_, [&]() { return ReadAllOnce(tp, isolation); });
}

absl::StatusOr<std::vector<ConsumerRecord>> KafkaReader::ReadAllOnce(const TopicPartition& tp,
                                                                     IsolationLevel isolation) {
  absl::StatusOr<std::map<TopicPartition, int64_t>> end = admin_->EndOffsets({tp});
  if (!end.ok()) return end.status();
  auto consumer = transport_.NewRestoreConsumer(
      {.client_id = "soak-reader", .max_poll_records = 10000, .isolation_level = isolation});
  if (absl::Status s = consumer->Assign({tp}); !s.ok()) return s;
  if (absl::Status s = consumer->SeekToBeginning({tp}); !s.ok()) return s;
  std::vector<ConsumerRecord> out;
  const TimeNs deadline = DeadlineAfter(clock_.NowNs(), kReadTimeoutNs);
  absl::StatusOr<int64_t> position = consumer->Position(tp);
  while (position.ok() && *position < end->at(tp) && clock_.NowNs() < deadline) {
    absl::StatusOr<PollResult> polled = consumer->Poll(200 * kMillisecond);
    if (!polled.ok() && !IsRetryable(polled.status())) return polled.status();
    if (polled.ok()) {
      for (PartitionRecords& batch : polled->partitions) {
        for (ConsumerRecord& r : batch.records) out.push_back(std::move(r));
      }
    }
    position = consumer->Position(tp);
  }
  if (!position.ok()) return position.status();
  if (*position < end->at(tp)) {
    return absl::UnavailableError(fmt::format("read of {} stopped at {} of {}", tp.ToString(),
                                              *position, end->at(tp)));
  }
  return out;
}

absl::StatusOr<std::map<TopicPartition, int64_t>> KafkaReader::EndOffsets(
    const std::vector<TopicPartition>& tps) {
  return Retry(clock_, [&]() { return admin_->EndOffsets(tps); });
}

absl::StatusOr<std::map<TopicPartition, int64_t>> KafkaReader::Committed(
    const std::string& group, const std::vector<TopicPartition>& tps) {
  return Retry(clock_, [&]() { return admin_->CommittedOffsets(group, tps); });
}

StoreAudit AuditStateDir(KafkaReader& reader, const AppLayout& app, const std::string& state_dir,
                         ChangelogCache& cache) {
  RS_CHECK(app.partitions > 0, "an app of {} partitions", app.partitions);
  StoreAudit audit;
  for (int32_t p = 0; p < app.partitions; ++p) {
    const std::string task_dir = fmt::format("{}/{}/0_{}", state_dir, app.app_id, p);
    if (!std::filesystem::exists(task_dir + "/" + std::string(kCountsStoreName))) continue;
    if (!cache.contains(p)) {
      absl::StatusOr<std::vector<ConsumerRecord>> log =
          reader.ReadAll(app.Changelog(p), IsolationLevel::kReadCommitted);
      if (!log.ok()) {
        audit.problems.push_back(fmt::format("read {}: {}", app.Changelog(p).ToString(),
                                             log.status().ToString()));
        continue;
      }
      cache[p] = std::move(*log);
    }
    AuditStore(app, p, task_dir, cache[p], audit);
  }
  return audit;
}

absl::StatusOr<CountsAudit> AuditCounts(KafkaReader& reader, const AppLayout& app) {
  CountsAudit audit;
  for (int32_t p = 0; p < app.partitions; ++p) {
    absl::StatusOr<std::vector<ConsumerRecord>> input =
        reader.ReadAll(app.Input(p), IsolationLevel::kReadCommitted);
    if (!input.ok()) return input.status();
    absl::StatusOr<std::vector<ConsumerRecord>> log =
        reader.ReadAll(app.Changelog(p), IsolationLevel::kReadCommitted);
    if (!log.ok()) return log.status();
    audit.input_records += static_cast<int64_t>(input->size());
    const std::map<std::string, std::string> want = ReferenceCounts(*input);
    const std::map<std::string, std::string> got = FoldChangelog(*log);
    for (const auto& [key, value] : want) {
      ++audit.keys;
      auto it = got.find(key);
      const int64_t have = it == got.end() ? 0 : std::stoll(it->second);
      const int64_t expected = std::stoll(value);
      if (have < expected) {
        audit.lost += expected - have;
        if (audit.problems.size() < kProblemsMax) {
          audit.problems.push_back(fmt::format("{} key {}: count {} of {} input records",
                                               app.Input(p).ToString(), key, have, expected));
        }
      } else {
        audit.duplicates += have - expected;
      }
    }
  }
  return audit;
}

}  // namespace restoresim::soak
