// Small owners and conversions around librdkafka's C API, shared by the adapter's clients:
// handles, partition lists, timeouts, and the blocking metadata and watermark calls.
//
// Thread-safety: the functions are stateless; a handle is used as its client says.
#ifndef RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_HANDLE_H_
#define RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_HANDLE_H_

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim::rdkafka {

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;

struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using ListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;

struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

// Creates a client from `conf` (taken, also on failure).
absl::StatusOr<HandlePtr> NewHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf);

// A librdkafka timeout in milliseconds: rounded up, at least 0, at most a day.
int TimeoutMs(TimeNs timeout_ns);

TopicPartition PartitionOf(const rd_kafka_topic_partition_t& element);
// A list of `partitions`, each with `offset` (RD_KAFKA_OFFSET_INVALID: none).
ListPtr ToList(const std::vector<TopicPartition>& partitions,
               int64_t offset = RD_KAFKA_OFFSET_INVALID);
ListPtr ToList(const std::vector<std::pair<TopicPartition, int64_t>>& offsets);
std::vector<TopicPartition> PartitionsOf(const rd_kafka_topic_partition_list_t* list);

// The partition count of `topic` from the cluster's metadata (kNotFound when unknown).
absl::StatusOr<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                                       TimeNs timeout_ns);

// The log start offset and the high watermark of one partition, asked of its leader.
absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(rd_kafka_t* rk,
                                                       const TopicPartition& partition,
                                                       TimeNs timeout_ns);

// Waits up to timeout_ns for the admin result event `type` on `queue`.
absl::StatusOr<EventPtr> WaitForResult(rd_kafka_queue_t* queue, rd_kafka_event_type_t type,
                                       TimeNs timeout_ns, std::string_view call);

}  // namespace restoresim::rdkafka

#endif  // RESTORESIM_CORE_TRANSPORT_RDKAFKA_RDKAFKA_HANDLE_H_
