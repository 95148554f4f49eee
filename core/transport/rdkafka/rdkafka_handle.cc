#include "core/transport/rdkafka/rdkafka_handle.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/transport/rdkafka/rdkafka_errors.h"

namespace restoresim::rdkafka {

absl::StatusOr<HandlePtr> NewHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof(error));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);  // rd_kafka_new takes the conf only when it succeeds
    return absl::InvalidArgumentError(fmt::format("rd_kafka_new: {}", error));
  }
  return HandlePtr(rk);
}

int TimeoutMs(TimeNs timeout_ns) {
  constexpr TimeNs kDayNs = 24 * 3600 * kSecond;
  const TimeNs bounded = std::clamp<TimeNs>(timeout_ns, 0, kDayNs);
  return static_cast<int>((bounded + kMillisecond - 1) / kMillisecond);
}

TopicPartition PartitionOf(const rd_kafka_topic_partition_t& element) {
  return TopicPartition{element.topic, element.partition};
}

ListPtr ToList(const std::vector<TopicPartition>& partitions, int64_t offset) {
  ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
  }
  return list;
}

ListPtr ToList(const std::vector<std::pair<TopicPartition, int64_t>>& offsets) {
  ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& [tp, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
  }
  return list;
}

std::vector<TopicPartition> PartitionsOf(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  if (list == nullptr) return out;
  for (int i = 0; i < list->cnt; ++i) out.push_back(PartitionOf(list->elems[i]));
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                                       TimeNs timeout_ns) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return ToStatus(rd_kafka_last_error(), fmt::format("partition count of {}", topic));
  }
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, TimeoutMs(timeout_ns));
  rd_kafka_topic_destroy(rkt);
  const std::string context = fmt::format("partition count of {}", topic);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, context);
  absl::StatusOr<int32_t> count = absl::NotFoundError(context + ": not in the metadata");
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    if (topic != t.topic) continue;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      count = ToStatus(t.err, context);
    } else if (t.partition_cnt == 0) {
      count = absl::NotFoundError(context + ": no partitions yet");
    } else {
      count = t.partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  return count;
}

absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(rd_kafka_t* rk,
                                                       const TopicPartition& partition,
                                                       TimeNs timeout_ns) {
  int64_t low = 0;
  int64_t high = 0;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk, partition.topic.c_str(), partition.partition, &low, &high, TimeoutMs(timeout_ns));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ToStatus(err, fmt::format("watermarks of {}", partition.ToString()));
  }
  return std::make_pair(low, high);
}

absl::StatusOr<EventPtr> WaitForResult(rd_kafka_queue_t* queue, rd_kafka_event_type_t type,
                                       TimeNs timeout_ns, std::string_view call) {
  EventPtr event(rd_kafka_queue_poll(queue, TimeoutMs(timeout_ns)));
  if (event == nullptr) return ToStatus(RD_KAFKA_RESP_ERR__TIMED_OUT, call);
  if (rd_kafka_event_type(event.get()) != type) {
    return absl::InternalError(fmt::format("{}: unexpected event {}", call,
                                           rd_kafka_event_name(event.get())));
  }
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ToStatus(rd_kafka_event_error(event.get()), call);
  }
  return event;
}

}  // namespace restoresim::rdkafka
