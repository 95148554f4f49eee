// The admin client: topic creation, partition counts (metadata), end and beginning offsets
// (one ListOffsets round per call, through offsets_for_times with the special timestamps -1
// and -2: librdkafka 2.0.2 has no ListOffsets admin call), a group's committed offsets and
// DeleteRecords.
//
// Committed offsets are an OffsetFetch of our own (kafka_protocol_connection.h) to the group's
// coordinator, not librdkafka's ListConsumerGroupOffsets: when that one is answered
// NOT_COORDINATOR (the coordinator it knew moved while the broker stayed up), librdkafka 2.0.2
// asks the handle's consumer group to find the coordinator again, and an admin handle has none:
// rdk:main dereferences a null group (SIGSEGV; confluentinc/librdkafka#5040). Failing test first:
// KafkaFailureTest.CommittedOffsetsFollowACoordinatorThatMovedWhileTheAdminWasIdle (3 crashes
// in 3 runs). Kafka's admin (ListConsumerGroupOffsetsHandler) finds the coordinator again and
// retries on the coordinator errors; so does this one, within the request timeout.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/transport/rdkafka/rdkafka_handle.h"
#include "core/util/check.h"

namespace restoresim::rdkafka {

namespace kp = restoresim::kafka_protocol;

RdKafkaAdmin::RdKafkaAdmin(const std::vector<Setting>& settings,
                           std::vector<Setting> read_committed_settings,
                           const RdKafkaOptions& options, std::string client_id, Clock& clock)
    : options_(options),
      client_id_(std::move(client_id)),
      clock_(clock),
      read_committed_settings_(std::move(read_committed_settings)) {
  absl::StatusOr<HandlePtr> handle = NewConsumerHandle(settings);
  if (!handle.ok()) {
    init_status_ = handle.status();
    return;
  }
  handle_ = std::move(*handle);
  results_.reset(rd_kafka_queue_new(handle_.get()));
}

RdKafkaAdmin::~RdKafkaAdmin() {
  results_.reset();
  read_committed_handle_.reset();
  handle_.reset();
}

rd_kafka_AdminOptions_t* RdKafkaAdmin::Options(rd_kafka_admin_op_t op) const {
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(handle_.get(), op);
  char error[256];
  rd_kafka_AdminOptions_set_request_timeout(options, TimeoutMs(options_.request_timeout_ns), error,
                                            sizeof(error));
  return options;
}

absl::Status RdKafkaAdmin::CreateTopic(const std::string& topic, int32_t partitions) {
  if (!init_status_.ok()) return init_status_;
  char error[512];
  // Replication -1: the broker's default.replication.factor (every node of the local cluster).
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, error, sizeof(error));
  if (new_topic == nullptr) {
    return absl::InvalidArgumentError(fmt::format("create topic {}: {}", topic, error));
  }
  rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_CreateTopics(handle_.get(), &new_topic, 1, options, results_.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(new_topic);
  const std::string call = fmt::format("create topic {}", topic);
  absl::StatusOr<EventPtr> event = WaitForResult(
      results_.get(), RD_KAFKA_EVENT_CREATETOPICS_RESULT, options_.request_timeout_ns + kSecond,
      call);
  if (!event.ok()) return event.status();
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(
      rd_kafka_event_CreateTopics_result(event->get()), &count);
  for (size_t i = 0; i < count; ++i) {
    if (absl::Status s = ToStatus(rd_kafka_topic_result_error(results[i]), call); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> RdKafkaAdmin::PartitionCount(const std::string& topic) {
  if (!init_status_.ok()) return init_status_;
  return rdkafka::PartitionCount(handle_.get(), topic, options_.request_timeout_ns);
}

namespace {

// The errors of a request sent to a broker that no longer leads the partition (or does not yet
// know it): the client's metadata is stale, and asking again with fresh metadata is the cure.
bool StaleLeader(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_REPLICA_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
      return true;
    default:
      return false;
  }
}

// Asks for the topics' metadata, which replaces the handle's cached leaders.
void RefreshLeaders(rd_kafka_t* rk, const std::vector<TopicPartition>& partitions,
                    TimeNs timeout_ns) {
  std::set<std::string> topics;
  for (const TopicPartition& tp : partitions) topics.insert(tp.topic);
  for (const std::string& topic : topics) (void)PartitionCount(rk, topic, timeout_ns);
}

}  // namespace

// librdkafka 2.0.2's offsets_for_times sends to the leader its metadata cache names and, when
// that broker answers that it no longer leads, returns the error without refreshing the cache:
// an idle handle then asks a restarted former leader for as long as the cache lives (seen for
// 139 s by the soak; KafkaFailureTest.EndOffsetsFollowALeaderThatMovedWhileTheAdminWasIdle).
// Kafka's admin client refreshes its metadata and retries; so does this, a bounded number of
// times within the call.
absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::ListOffsets(
    const std::vector<TopicPartition>& partitions, int64_t which, std::string_view call,
    rd_kafka_t* rk) {
  if (!init_status_.ok()) return init_status_;
  std::map<TopicPartition, int64_t> offsets;
  if (partitions.empty()) return offsets;
  rd_kafka_t* handle = rk != nullptr ? rk : handle_.get();
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    ListPtr list = ToList(partitions, which);  // the "offset" is the ListOffsets timestamp
    const rd_kafka_resp_err_t err =
        rd_kafka_offsets_for_times(handle, list.get(), TimeoutMs(options_.request_timeout_ns));
    bool stale = StaleLeader(err);
    for (int i = 0; i < list->cnt && err == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      stale = stale || StaleLeader(list->elems[i].err);
    }
    if (stale && attempt < kAttempts) {
      RefreshLeaders(handle, partitions, options_.request_timeout_ns);
      continue;
    }
    if (absl::Status s = ToStatus(err, call); !s.ok()) return s;
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& e = list->elems[i];
      if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return ToStatus(e.err, fmt::format("{} of {}", call, PartitionOf(e).ToString()));
      }
      offsets[PartitionOf(e)] = e.offset;
    }
    RS_CHECK(offsets.size() <= partitions.size(), "{}: {} offsets for {} partitions", call,
             offsets.size(), partitions.size());
    return offsets;
  }
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::EndOffsets(
    const std::vector<TopicPartition>& partitions) {
  return ListOffsets(partitions, RD_KAFKA_OFFSET_END, "end offsets");
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::EndOffsetsFor(
    const std::vector<TopicPartition>& partitions, IsolationLevel isolation_level) {
  if (isolation_level == IsolationLevel::kReadUncommitted) return EndOffsets(partitions);
  if (!init_status_.ok()) return init_status_;
  // ListOffsets takes its isolation level from the handle's isolation.level: a second handle,
  // built at the first read_committed query (librdkafka 2.0.2 has no ListOffsets options).
  if (read_committed_handle_ == nullptr) {
    absl::StatusOr<HandlePtr> handle = NewConsumerHandle(read_committed_settings_);
    if (!handle.ok()) return handle.status();
    read_committed_handle_ = std::move(*handle);
  }
  return ListOffsets(partitions, RD_KAFKA_OFFSET_END, "stable end offsets",
                     read_committed_handle_.get());
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::BeginningOffsets(
    const std::vector<TopicPartition>& partitions) {
  return ListOffsets(partitions, RD_KAFKA_OFFSET_BEGINNING, "beginning offsets");
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::CommittedOffsets(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  if (!init_status_.ok()) return init_status_;
  const TimeNs deadline_ns = DeadlineAfter(clock_.NowNs(), options_.request_timeout_ns);
  TimeNs backoff_ns = 100 * kMillisecond;  // Kafka's retry.backoff.ms, doubling to 1 s
  for (;;) {
    absl::StatusOr<std::map<TopicPartition, int64_t>> got = CommittedOffsetsOnce(group, partitions);
    if (got.ok() || !IsRetryable(got.status())) return got;
    coordinator_.reset();  // found again at the next attempt
    if (clock_.NowNs() + backoff_ns >= deadline_ns) return got;
    clock_.SleepFor(backoff_ns);
    backoff_ns = std::min(2 * backoff_ns, kSecond);
  }
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::CommittedOffsetsOnce(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  const std::string call = fmt::format("committed offsets of group {}", group);
  if (!coordinator_.has_value() || coordinator_group_ != group) {
    coordinator_.reset();
    absl::StatusOr<KafkaProtocolConnection> c = KafkaProtocolConnection::OpenToCoordinator(
        options_.bootstrap_servers, group, client_id_, clock_, /*retry=*/false);
    if (!c.ok()) return c.status();
    coordinator_.emplace(*std::move(c));
    coordinator_group_ = group;
  }
  kp::OffsetFetchGroup asked{.group_id = group, .topics = std::vector<kp::OffsetFetchTopic>()};
  for (const TopicPartition& tp : partitions) {
    if (asked.topics->empty() || asked.topics->back().name != tp.topic) {
      asked.topics->push_back({.name = tp.topic});
    }
    asked.topics->back().partition_indexes.push_back(tp.partition);
  }
  absl::StatusOr<kp::OffsetFetchResponse> response =
      coordinator_->OffsetFetch(kp::OffsetFetchRequest{.groups = {asked}});
  if (!response.ok()) return response.status();
  return OffsetsOf(*response, group, partitions, call);
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaAdmin::OffsetsOf(
    const kp::OffsetFetchResponse& response, const std::string& group,
    const std::vector<TopicPartition>& partitions, const std::string& call) {
  if (response.groups.size() != 1 || response.groups[0].group_id != group) {
    return absl::DataLossError(fmt::format("{}: the response names {} groups, not this one", call,
                                           response.groups.size()));
  }
  const kp::OffsetFetchGroupResult& g = response.groups[0];
  if (g.error_code != 0) {
    if (RetriableCoordinatorError(g.error_code)) {
      return absl::UnavailableError(fmt::format("{}: coordinator error {}", call, g.error_code));
    }
    return KafkaErrorToStatus(g.error_code, std::nullopt, call);
  }
  std::map<TopicPartition, int64_t> offsets;
  for (const kp::OffsetFetchTopicResult& t : g.topics) {
    for (const kp::OffsetFetchPartitionResult& p : t.partitions) {
      const TopicPartition tp{t.name, p.partition_index};
      if (p.error_code != 0) {
        return KafkaErrorToStatus(p.error_code, std::nullopt,
                                  fmt::format("{}: {}", call, tp.ToString()));
      }
      if (std::find(partitions.begin(), partitions.end(), tp) == partitions.end()) {
        return absl::DataLossError(fmt::format("{}: {} was not asked for", call, tp.ToString()));
      }
      if (p.committed_offset >= 0) offsets[tp] = p.committed_offset;  // -1: nothing committed
    }
  }
  return offsets;
}

absl::Status RdKafkaAdmin::DeleteRecords(const std::map<TopicPartition, int64_t>& before_offsets) {
  if (!init_status_.ok()) return init_status_;
  std::vector<std::pair<TopicPartition, int64_t>> entries(before_offsets.begin(),
                                                          before_offsets.end());
  ListPtr list = ToList(entries);
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(list.get());
  rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_DELETERECORDS);
  rd_kafka_DeleteRecords(handle_.get(), &request, 1, options, results_.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_DeleteRecords_destroy(request);
  absl::StatusOr<EventPtr> event =
      WaitForResult(results_.get(), RD_KAFKA_EVENT_DELETERECORDS_RESULT,
                    options_.request_timeout_ns + kSecond, "delete records");
  if (!event.ok()) return event.status();
  const rd_kafka_topic_partition_list_t* got =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(event->get()));
  for (int i = 0; got != nullptr && i < got->cnt; ++i) {
    if (got->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ToStatus(got->elems[i].err, fmt::format("delete records of {}",
                                                     PartitionOf(got->elems[i]).ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace restoresim::rdkafka
