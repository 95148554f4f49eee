// ChangelogReader, part 2: what it does with errors (changelog_reader.h states the rules) —
// corruption and task-scoped failures unregister the owner's changelogs and are reported by
// the step; retryable store errors stall their owner.
#include <algorithm>

#include <fmt/format.h>

#include "core/runtime/changelog_reader.h"
#include "core/runtime/runtime_observer.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

void ChangelogReader::MarkCorrupted(const std::vector<TopicPartition>& partitions) {
  std::set<TaskIncarnation> owners;
  for (const TopicPartition& tp : partitions) {
    auto it = changelogs_.find(tp);
    RS_CHECK(it != changelogs_.end(), "out-of-range report for unregistered changelog {}",
             tp.ToString());
    corrupted_[it->second.owner].insert(tp);
    owners.insert(it->second.owner);
  }
  if (partitions.size() < changelogs_.size()) {
    for (const auto& [tp, c] : changelogs_) {
      if (owners.contains(c.owner) &&
          std::find(partitions.begin(), partitions.end(), tp) == partitions.end()) {
        TraceMark("cover", "corruption of one of a task's changelogs");
        break;
      }
    }
  }
  // Every changelog of a corrupted task goes: the stream thread closes it dirty and revives it.
  // (Mutation partial-unregister-on-corruption, PR 12519: only the ones named in the error.)
  std::vector<TopicPartition> drop;
  for (const auto& [tp, c] : changelogs_) {
    if (!owners.contains(c.owner)) continue;
    if (RS_MUTANT(kPartialUnregisterOnCorruption) &&
        std::find(partitions.begin(), partitions.end(), tp) == partitions.end()) {
      continue;
    }
    drop.push_back(tp);
  }
  Unregister(drop);
}

void ChangelogReader::StoreError(const TopicPartition& tp, const absl::Status& error,
                                 RestoreStep& step) {
  const TaskIncarnation owner = changelogs_.at(tp).owner;
  if (IsRetryable(error)) {
    step.stalled.emplace(owner, error);
    return;
  }
  // A store that lost data (a write that found a corrupted block: RocksDB's Corruption) is its
  // task's corruption, wiped and restored from scratch by the stream thread — never the task's
  // failure (issue 25: any DataLoss of a store, at open, read or write, is task corruption).
  if (absl::IsDataLoss(error)) {
    TraceMark("task", fmt::format("store data loss while restoring {}: corrupted",
                                  tp.ToString()));
    MarkCorrupted({tp});
    return;
  }
  MarkFailed(tp, error);
}

void ChangelogReader::MarkFailed(const TopicPartition& tp, const absl::Status& error) {
  auto it = changelogs_.find(tp);
  RS_CHECK(it != changelogs_.end(), "failure of unregistered changelog {}", tp.ToString());
  const TaskIncarnation owner = it->second.owner;
  failed_.emplace(owner, absl::Status(error.code(),
                                      fmt::format("task {} failed restoring {}: {}",
                                                  owner.id.ToString(), tp.ToString(),
                                                  std::string(error.message()))));
  TraceMark("cover", "restoration failed: task-scoped store error");
  std::vector<TopicPartition> drop;
  for (const auto& [other, c] : changelogs_) {
    if (c.owner == owner) drop.push_back(other);
  }
  Unregister(drop);
  RS_CHECK(ChangelogsOf(owner).empty(), "failed task {} keeps changelogs registered",
           owner.ToString());
}

}  // namespace restoresim
