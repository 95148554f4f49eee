#include "fakes/fake_broker.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/runtime/runtime_observer.h"
#include "core/sync/thread.h"
#include "core/util/check.h"
#include "fakes/fake_clients.h"

namespace restoresim::fakes {
namespace {

bool ValidTopicName(const std::string& topic) {
  if (topic.empty() || topic.size() > FakeBroker::kTopicNameBytesMax) return false;
  for (char c : topic) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return topic != "." && topic != "..";
}

}  // namespace

FakeBroker::FakeBroker(Clock& clock, RandomSource* faults_random, const BrokerFaults& faults,
                       const BrokerOptions& options)
    : clock_(clock),
      options_(options),
      faults_random_(faults_random),
      faults_(faults),
      faults_on_(faults_random != nullptr && faults.any()),
      injector_(faults_random, faults),
      streams_settings_(options.streams_group) {
  RS_CHECK_GE(options_.request_latency_ns, 0);
  RS_CHECK_GE(options_.request_timeout_ns, 0);
}

FakeBroker::~FakeBroker() = default;

// ---- scenario controls ----

absl::Status FakeBroker::CreateTopic(const std::string& topic, int32_t partitions) {
  if (!ValidTopicName(topic)) {
    return absl::InvalidArgumentError(fmt::format("invalid topic name '{}'", topic));
  }
  if (partitions <= 0 || partitions > kTopicPartitionsMax) {
    return absl::InvalidArgumentError(fmt::format("topic {}: {} partitions, expected 1..{}", topic,
                                                  partitions, kTopicPartitionsMax));
  }
  MutexLock lock(mu_);
  if (topics_.contains(topic)) {
    return absl::AlreadyExistsError(fmt::format("topic {} already exists", topic));
  }
  AddTopicLocked(topic, partitions);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> FakeBroker::PartitionCount(const std::string& topic) {
  MutexLock lock(mu_);
  const int32_t count = PartitionCountLocked(topic);
  if (count == 0) return absl::NotFoundError(fmt::format("unknown topic {}", topic));
  return count;
}

absl::StatusOr<int64_t> FakeBroker::Append(const TopicPartition& partition, std::string_view key,
                                           std::optional<std::string_view> value,
                                           int64_t timestamp_ms) {
  MutexLock lock(mu_);
  return AppendLocked(partition, key, value, timestamp_ms);
}

absl::Status FakeBroker::DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets) {
  MutexLock lock(mu_);
  return DeleteRecordsLocked(before_offsets);
}

absl::StatusOr<int64_t> FakeBroker::EndOffset(const TopicPartition& partition) {
  MutexLock lock(mu_);
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  return Log(partition).end_offset();
}

absl::StatusOr<int64_t> FakeBroker::LogStartOffset(const TopicPartition& partition) {
  MutexLock lock(mu_);
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  return Log(partition).log_start_offset();
}

absl::StatusOr<std::vector<ConsumerRecord>> FakeBroker::ReadLog(const TopicPartition& partition,
                                                                int64_t from_offset,
                                                                size_t max_records) {
  MutexLock lock(mu_);
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  return Log(partition).Read(from_offset, max_records);
}

absl::StatusOr<std::vector<ConsumerRecord>> FakeBroker::ReadCommittedLog(
    const TopicPartition& partition, int64_t from_offset, int64_t limit_offset) {
  MutexLock lock(mu_);
  if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
  const PartitionLog& log = Log(partition);
  if (from_offset < log.log_start_offset() || from_offset > log.end_offset()) {
    return absl::OutOfRangeError(fmt::format("{}: offset {} outside [{}, {}]",
                                             partition.ToString(), from_offset,
                                             log.log_start_offset(), log.end_offset()));
  }
  const int64_t limit = std::max(from_offset, std::min(limit_offset, log.last_stable_offset()));
  return log.Fetch(from_offset, limit, static_cast<size_t>(limit - from_offset),
                   /*skip_aborted=*/true)
      .records;
}

std::vector<ConsumerRecord> FakeBroker::PeekLog(const TopicPartition& partition,
                                                IsolationLevel isolation_level) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const PartitionLog* found = FindLog(partition);
  if (found == nullptr) return {};
  const PartitionLog& log = *found;
  if (isolation_level == IsolationLevel::kReadCommitted) {
    return log
        .Fetch(log.log_start_offset(), log.last_stable_offset(),
               static_cast<size_t>(log.record_count()), /*skip_aborted=*/true)
        .records;
  }
  absl::StatusOr<std::vector<ConsumerRecord>> records =
      log.Read(log.log_start_offset(), static_cast<size_t>(log.record_count()));
  return records.ok() ? std::move(*records) : std::vector<ConsumerRecord>();
}

int64_t FakeBroker::PeekLastStableOffset(const TopicPartition& partition) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const PartitionLog* log = FindLog(partition);
  return log == nullptr ? 0 : log->last_stable_offset();
}

int64_t FakeBroker::PeekLogStartOffset(const TopicPartition& partition) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const PartitionLog* log = FindLog(partition);
  return log == nullptr ? 0 : log->log_start_offset();
}

void FakeBroker::SetManualAssignment(const std::string& group, bool manual) {
  MutexLock lock(mu_);
  Group(group).set_manual(manual);
}

absl::Status FakeBroker::Rebalance(const std::string& group,
                                   const std::map<std::string, Assignment>& assignments) {
  MutexLock lock(mu_);
  absl::Status status = Group(group).Rebalance(assignments);
  if (status.ok()) changed_.NotifyAll();
  return status;
}

absl::Status FakeBroker::LoseMember(const std::string& group, const std::string& member_id) {
  MutexLock lock(mu_);
  absl::Status status = Group(group).Lose(member_id);
  if (status.ok()) changed_.NotifyAll();
  return status;
}

std::vector<std::string> FakeBroker::Members(const std::string& group) {
  MutexLock lock(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? std::vector<std::string>{} : it->second.members();
}

int32_t FakeBroker::Generation(const std::string& group) {
  MutexLock lock(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.generation();
}

bool FakeBroker::PeekGroupSettled(const std::string& group) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (auto s = streams_groups_.find(group); s != streams_groups_.end() && !s->second.Settled()) {
    return false;
  }
  auto it = groups_.find(group);
  return it == groups_.end() || it->second.Settled();
}

std::map<TopicPartition, int64_t> FakeBroker::CommittedOffsets(const std::string& group) {
  MutexLock lock(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? std::map<TopicPartition, int64_t>{} : it->second.committed();
}

BrokerFaults FakeBroker::faults() const {
  MutexLock lock(mu_);
  return faults_;
}

void FakeBroker::SetFaults(const BrokerFaults& faults) {
  MutexLock lock(mu_);
  RS_CHECK(faults_random_ != nullptr || !faults.any(),
           "faults turned on for a broker built without a faults_random");
  faults_ = faults;
  injector_.SetFaults(faults);
  faults_on_.store(faults_random_ != nullptr && faults.any());
}

FaultCounts FakeBroker::faults_injected() {
  MutexLock lock(mu_);
  return injector_.counts();
}

size_t FakeBroker::MemoryBytes() {
  MutexLock lock(mu_);
  size_t bytes = 0;
  for (const auto& [topic, logs] : topics_) {
    for (const PartitionLog& log : logs) bytes += log.MemoryBytes();
  }
  return bytes;
}

// ---- Transport ----

std::unique_ptr<RestoreConsumer> FakeBroker::NewRestoreConsumer(const ConsumerConfig& config) {
  TransportPoint(config.client_id, "transport.new_restore_consumer");
  return std::make_unique<FakeRestoreConsumer>(*this, config);
}

std::unique_ptr<MainConsumer> FakeBroker::NewMainConsumer(const std::string& group,
                                                          const ConsumerConfig& config) {
  TransportPoint(config.client_id, "transport.new_main_consumer");
  if (config.group_protocol == GroupProtocol::kStreams) {
    return std::make_unique<FakeStreamsGroupConsumer>(*this, group, config);
  }
  return std::make_unique<FakeMainConsumer>(*this, group, config);
}

std::unique_ptr<Admin> FakeBroker::NewAdmin(const std::string& client_id) {
  TransportPoint(client_id, "transport.new_admin");
  return std::make_unique<FakeAdmin>(*this, client_id);
}

std::unique_ptr<Producer> FakeBroker::NewProducer(const std::string& client_id) {
  TransportPoint(client_id, "transport.new_producer");
  return std::make_unique<FakeProducer>(*this, client_id);
}

// ---- for the clients ----

void FakeBroker::TransportPoint(std::string_view client_id, std::string_view call) {
  TraceMark("transport", call);
  RS_OBSERVE(OnTransportCall, client_id, call);
  if (SimHooks* sim = CurrentSim()) {
    sim->Point(SimOp::kTransport, sim->Id(sim_state_, SimObjectKind::kOther, "fake_broker"));
  }
}

absl::Status FakeBroker::Request(std::string_view call, TimeNs timeout_ns, bool is_fetch) {
  FaultInjector::RequestFault fault;
  if (faults_on_) {
    MutexLock lock(mu_);
    fault = injector_.OnRequest(call, is_fetch);
  }
  const TimeNs latency_ns = options_.request_latency_ns + fault.extra_latency_ns;
  if (latency_ns > 0) clock_.SleepFor(latency_ns);
  if (fault.wait_timeout && timeout_ns > 0) clock_.SleepFor(timeout_ns);
  return fault.status;
}

absl::Status FakeBroker::CheckPartition(const TopicPartition& partition) const {
  // The common case by the interned name (a hash of its address), not a string-keyed lookup.
  if (FindLog(partition) != nullptr) return absl::OkStatus();
  auto it = topics_.find(partition.topic);
  if (it == topics_.end()) {
    return absl::NotFoundError(fmt::format("unknown topic {}", partition.topic));
  }
  if (partition.partition < 0 || static_cast<size_t>(partition.partition) >= it->second.size()) {
    return absl::NotFoundError(fmt::format("unknown partition {} (topic {} has {})",
                                           partition.ToString(), partition.topic,
                                           it->second.size()));
  }
  return absl::OkStatus();
}

absl::Status FakeBroker::CheckTopics(const std::vector<std::string>& topics) const {
  for (const std::string& topic : topics) {
    if (!topics_.contains(topic)) {
      return absl::NotFoundError(fmt::format("unknown topic {}", topic));
    }
  }
  return absl::OkStatus();
}

PartitionLog& FakeBroker::Log(const TopicPartition& partition) {
  PartitionLog* log = FindLog(partition);
  RS_CHECK(log != nullptr, "no log for {}", partition.ToString());
  return *log;
}

PartitionLog* FakeBroker::FindLog(const TopicPartition& partition) const {
  auto it = logs_by_topic_.find(partition.topic.id());
  if (it == logs_by_topic_.end() || partition.partition < 0 ||
      static_cast<size_t>(partition.partition) >= it->second->size()) {
    return nullptr;
  }
  return &(*it->second)[static_cast<size_t>(partition.partition)];
}

void FakeBroker::AddTopicLocked(const std::string& topic, int32_t partitions) {
  std::vector<PartitionLog>& logs = topics_[topic];
  logs.resize(static_cast<size_t>(partitions));
  logs_by_topic_[Topic(topic).id()] = &logs;
}

int32_t FakeBroker::PartitionCountLocked(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? 0 : static_cast<int32_t>(it->second.size());
}

GroupCoordinator& FakeBroker::Group(const std::string& group) {
  auto it = groups_.find(group);
  if (it != groups_.end()) return it->second;
  // The coordinator calls back only from broker methods that hold mu_.
  auto counter = [this](const std::string& topic) {
    mu_.AssertHeld();
    return PartitionCountLocked(topic);
  };
  auto end_offset = [this](const TopicPartition& tp) -> std::optional<int64_t> {
    mu_.AssertHeld();
    if (!CheckPartition(tp).ok()) return std::nullopt;
    return Log(tp).end_offset();
  };
  return groups_.try_emplace(group, group, counter, end_offset).first->second;
}

absl::StatusOr<int64_t> FakeBroker::AppendLocked(const TopicPartition& partition,
                                                 std::string_view key,
                                                 std::optional<std::string_view> value,
                                                 int64_t timestamp_ms) {
  PartitionLog* log = FindLog(partition);  // one lookup: every record produced passes here
  if (log == nullptr) {
    absl::Status status = CheckPartition(partition);
    RS_CHECK(!status.ok(), "no log for {}", partition.ToString());
    return status;
  }
  absl::StatusOr<int64_t> offset = log->Append(key, value, timestamp_ms);
  if (offset.ok()) {
    changed_.NotifyAll();
    if (append_observer_) {
      ConsumerRecord r{.offset = *offset, .key = std::string(key), .timestamp_ms = timestamp_ms};
      if (value.has_value()) r.value = std::string(*value);
      append_observer_(partition, r);
    }
  }
  return offset;
}

absl::Status FakeBroker::DeleteRecordsLocked(
    const std::map<TopicPartition, int64_t>& before_offsets) {
  for (const auto& [partition, offset] : before_offsets) {
    if (absl::Status s = CheckPartition(partition); !s.ok()) return s;
    const PartitionLog& log = Log(partition);
    if (offset < 0) {
      return absl::InvalidArgumentError(
          fmt::format("delete records of {}: negative offset {}", partition.ToString(), offset));
    }
    if (offset > log.end_offset()) {
      return absl::OutOfRangeError(fmt::format("delete records of {}: offset {} past the end {}",
                                               partition.ToString(), offset, log.end_offset()));
    }
  }
  for (const auto& [partition, offset] : before_offsets) {
    absl::StatusOr<int64_t> start = Log(partition).DeleteRecordsBefore(offset);
    RS_CHECK(start.ok() && *start >= offset, "validated above: {}", start.status().ToString());
  }
  if (!before_offsets.empty()) changed_.NotifyAll();
  return absl::OkStatus();
}

void FakeBroker::MaybeLoseLeader(const std::vector<TopicPartition>& partitions) {
  if (!faults_on_) return;
  if (std::optional<FaultInjector::LeaderLoss> loss = injector_.LoseLeader(partitions.size())) {
    const TimeNs until = DeadlineAfter(clock_.NowNs(), loss->duration_ns);
    TimeNs& current = leaderless_until_[partitions[loss->index]];
    current = std::max(current, until);
  }
}

void FakeBroker::TakeLeaderAway(const TopicPartition& partition, TimeNs until_ns) {
  MutexLock lock(mu_);
  RS_CHECK(CheckPartition(partition).ok(), "no partition {}", partition.ToString());
  scripted_leaderless_until_[partition] = until_ns;
  TraceMark("fault", "leader taken away " + partition.ToString());
}

void FakeBroker::TakeCoordinatorAway(const std::string& group, TimeNs until_ns) {
  MutexLock lock(mu_);
  coordinator_gone_until_[group] = until_ns;
  TraceMark("fault", "coordinator taken away " + group);
}

bool FakeBroker::HasLeader(const TopicPartition& partition) {
  if (auto s = scripted_leaderless_until_.find(partition);
      s != scripted_leaderless_until_.end()) {
    if (clock_.NowNs() < s->second) return false;
    scripted_leaderless_until_.erase(s);
  }
  if (!faults_on_) return true;  // drawn leaderless periods end with the faults
  auto it = leaderless_until_.find(partition);
  if (it == leaderless_until_.end()) return true;
  if (clock_.NowNs() < it->second) return false;
  leaderless_until_.erase(it);  // the election is over
  return true;
}

absl::Status FakeBroker::CheckLeaders(const std::vector<TopicPartition>& partitions) {
  if (!faults_on_ && scripted_leaderless_until_.empty()) return absl::OkStatus();
  MaybeLoseLeader(partitions);
  for (const TopicPartition& tp : partitions) {
    if (!HasLeader(tp)) {
      return InjectedError(absl::StatusCode::kUnavailable,
                           fmt::format("leader not available for {}", tp.ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace restoresim::fakes
