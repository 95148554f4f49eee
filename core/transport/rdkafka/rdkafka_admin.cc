// The admin client: topic creation, partition counts (metadata), end and beginning offsets
// (one ListOffsets round per call, through offsets_for_times with the special timestamps -1
// and -2: librdkafka 2.0.2 has no ListOffsets admin call), a group's committed offsets
// (ListConsumerGroupOffsets) and DeleteRecords.
#include <fmt/format.h>

#include <set>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/transport/rdkafka/rdkafka_handle.h"
#include "core/util/check.h"

namespace restoresim::rdkafka {

RdKafkaAdmin::RdKafkaAdmin(const std::vector<Setting>& settings,
                           std::vector<Setting> read_committed_settings,
                           const RdKafkaOptions& options)
    : options_(options), read_committed_settings_(std::move(read_committed_settings)) {
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
  const std::string call = fmt::format("committed offsets of group {}", group);
  ListPtr list = ToList(partitions);
  rd_kafka_ListConsumerGroupOffsets_t* request =
      rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), list.get());
  rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
  rd_kafka_ListConsumerGroupOffsets(handle_.get(), &request, 1, options, results_.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_ListConsumerGroupOffsets_destroy(request);
  absl::StatusOr<EventPtr> event =
      WaitForResult(results_.get(), RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT,
                    options_.request_timeout_ns + kSecond, call);
  if (!event.ok()) return event.status();
  size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_ListConsumerGroupOffsets_result_groups(
      rd_kafka_event_ListConsumerGroupOffsets_result(event->get()), &count);
  std::map<TopicPartition, int64_t> offsets;
  for (size_t g = 0; g < count; ++g) {
    if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[g]); error != nullptr) {
      return ToStatus(rd_kafka_error_code(error), call);
    }
    const rd_kafka_topic_partition_list_t* got = rd_kafka_group_result_partitions(groups[g]);
    for (int i = 0; got != nullptr && i < got->cnt; ++i) {
      const rd_kafka_topic_partition_t& e = got->elems[i];
      if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return ToStatus(e.err, fmt::format("{}: {}", call, PartitionOf(e).ToString()));
      }
      if (e.offset >= 0) offsets[PartitionOf(e)] = e.offset;  // -1: nothing committed
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
