#include "fakes/fake_fetcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/util/check.h"

namespace restoresim::fakes {

Fetcher::Fetcher(FakeBroker& broker, const ConsumerConfig& config)
    : broker_(broker), config_(config) {}

void Fetcher::JoinedGroup(std::string group, std::string member_id) {
  group_ = std::move(group);
  group_coordinator_ = nullptr;
  member_id_ = std::move(member_id);
}

const PartitionLog& Fetcher::LogOf(const TopicPartition& partition, PartitionState& state) {
  if (state.extra.log == nullptr) state.extra.log = &broker_.Log(partition);
  return *state.extra.log;
}

GroupCoordinator& Fetcher::Group() {
  RS_CHECK(!group_.empty());
  if (group_coordinator_ == nullptr) group_coordinator_ = &broker_.Group(group_);
  return *group_coordinator_;
}

absl::StatusOr<int64_t> Fetcher::Position(const TopicPartition& partition) {
  if (absl::Status s = CheckAssigned(partition, "position"); !s.ok()) return s;
  MutexLock lock(broker_.mu_);
  PartitionState& state = At(partition);
  if (absl::Status s = Resolve(partition, state, LogOf(partition, state)); !s.ok()) return s;
  return *state.position;
}

absl::Status Fetcher::Resolve(const TopicPartition& partition, PartitionState& state,
                              const PartitionLog& log) {
  if (state.pending_seek.has_value()) {
    state.position =
        *state.pending_seek == OffsetReset::kEarliest ? log.log_start_offset() : EndOf(log);
    state.pending_seek.reset();
  }
  if (state.position.has_value()) return absl::OkStatus();
  if (!group_.empty()) {
    const auto& committed = Group().committed();
    if (auto it = committed.find(partition); it != committed.end()) {
      state.position = it->second;
      return absl::OkStatus();
    }
  }
  switch (config_.auto_offset_reset) {
    case OffsetReset::kEarliest:
      state.position = log.log_start_offset();
      return absl::OkStatus();
    case OffsetReset::kLatest:
      state.position = EndOf(log);
      return absl::OkStatus();
    case OffsetReset::kNone:
      break;
  }
  return NoPositionError(partition);
}

absl::StatusOr<PollResult> Fetcher::FetchUntil(TimeNs deadline_ns) {
  Clock& clock = broker_.clock_;
  MutexLock lock(broker_.mu_);
  // Bounded by the deadline: every turn that returns nothing waits on the clock.
  for (;;) {
    const uint64_t empty_polls_before = broker_.injector_.counts().empty_poll;
    absl::StatusOr<PollResult> result = FetchOnce();
    if (!result.ok() || result->RecordCount() > 0 || !result->out_of_range.empty()) return result;
    // An injected empty poll returns at once: waiting again would hide the fault.
    if (broker_.injector_.counts().empty_poll != empty_polls_before) return result;
    if (Interrupted() || clock.NowNs() >= deadline_ns) return result;
    clock.WaitUntil(broker_.changed_, broker_.mu_, deadline_ns);
  }
}

bool Fetcher::Interrupted() {
  return !member_id_.empty() && Group().HasEvents(member_id_);
}

int64_t Fetcher::EndOf(const PartitionLog& log) const {
  return read_committed() ? log.last_stable_offset() : log.end_offset();
}

absl::StatusOr<PollResult> Fetcher::FetchOnce() {
  RS_CHECK_GE(config_.max_poll_records, 1, "a consumer with a bad config refuses to poll");
  broker_.ExpireTransactionsLocked();  // the LSO read below is after the time-outs
  PollResult result;
  std::vector<Fetchable>& fetchable = fetchable_;
  if (absl::Status s = Candidates(result, fetchable); !s.ok()) return s;
  if ((broker_.faults_on_ || !broker_.scripted_leaderless_until_.empty()) &&
      !fetchable.empty()) {
    std::vector<TopicPartition> touched;
    for (const Fetchable& f : fetchable) touched.push_back(*f.partition);
    broker_.MaybeLoseLeader(touched);
    std::erase_if(fetchable, [&](const Fetchable& f) {
      broker_.mu_.AssertHeld();
      return !broker_.HasLeader(*f.partition);  // a fetch skips a leaderless partition
    });
  }
  int64_t available = 0;
  for (const Fetchable& f : fetchable) {
    available += std::max<int64_t>(0, EndOf(*f.log) - *f.state->position);
  }
  if (broker_.injector_.EmptyPoll(available)) return PollResult{};
  int64_t budget = std::min<int64_t>(config_.max_poll_records, available);
  budget = broker_.injector_.PartialFetchBudget(budget);
  Read(fetchable, budget, result);
  RS_CHECK_LE(static_cast<int64_t>(result.RecordCount()), config_.max_poll_records);
  return result;
}

absl::Status Fetcher::Candidates(PollResult& result, std::vector<Fetchable>& fetchable) {
  fetchable.clear();
  for (auto& [tp, state] : partitions()) {
    if (state.paused) continue;
    const PartitionLog& log = LogOf(tp, state);
    if (absl::Status s = Resolve(tp, state, log); !s.ok()) return s;
    const int64_t position = *state.position;
    if (position < log.log_start_offset() || position > log.end_offset()) {
      if (config_.auto_offset_reset == OffsetReset::kNone) {
        result.out_of_range.push_back(tp);
        continue;
      }
      state.position = config_.auto_offset_reset == OffsetReset::kEarliest ? log.log_start_offset()
                                                                           : EndOf(log);
    }
    fetchable.push_back(Fetchable{&tp, &state, &log});
  }
  return absl::OkStatus();
}

void Fetcher::Read(const std::vector<Fetchable>& fetchable, int64_t budget, PollResult& result) {
  if (fetchable.empty() || budget <= 0) return;
  const size_t start = static_cast<size_t>(rotation_++ % fetchable.size());
  for (size_t i = 0; i < fetchable.size() && budget > 0; ++i) {
    const Fetchable& f = fetchable[(start + i) % fetchable.size()];
    const int64_t position = *f.state->position;
    // Under read_committed a position may be past the LSO (it stays in range up to the end).
    const int64_t limit = EndOf(*f.log);
    if (position >= limit) continue;
    PartitionLog::Fetched fetched =
        f.log->Fetch(position, limit, static_cast<size_t>(budget), read_committed());
    RS_CHECK(fetched.next_offset > position && fetched.next_offset <= limit,
             "read of {} at {} went to {}", f.partition->ToString(), position,
             fetched.next_offset);
    RS_CHECK(fetched.records.empty() || fetched.records.front().offset >= position);
    // Markers and skipped aborted records are read over: the position passes them.
    f.state->position = fetched.next_offset;
    budget -= static_cast<int64_t>(fetched.records.size());
    if (fetched.records.empty()) continue;
    result.partitions.push_back(PartitionRecords{*f.partition, std::move(fetched.records)});
  }
  std::sort(result.partitions.begin(), result.partitions.end(),
            [](const PartitionRecords& a, const PartitionRecords& b) {
              return a.partition < b.partition;
            });
}

}  // namespace restoresim::fakes
