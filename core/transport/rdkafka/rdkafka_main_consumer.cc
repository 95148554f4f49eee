// The main consumer: a member of the application's group under the cooperative protocol.
// librdkafka calls RebalanceCallback on the polling thread, inside Poll (the consumer queue
// carries rebalances); the callback applies librdkafka's incremental assignment change and
// tells the port's listener: revoked (or lost) partitions while still owned, then the member's
// whole assignment.
#include <fmt/format.h>

#include "core/transport/rdkafka/rdkafka_clients.h"
#include "core/transport/rdkafka/rdkafka_errors.h"

namespace restoresim::rdkafka {

RdKafkaMainConsumer::RdKafkaMainConsumer(const std::vector<Setting>& settings,
                                         const ConsumerConfig& config,
                                         const RdKafkaOptions& options, Clock& clock)
    : options_(options),
      assignor_name_(config.assignor == nullptr ? "" : config.assignor->Name()) {
  for (const Setting& setting : settings) {
    if (setting.name == "group.id") group_ = setting.value;
  }
  absl::StatusOr<rd_kafka_conf_t*> conf = NewConf(settings);
  if (!conf.ok()) {
    init_status_ = conf.status();
    return;
  }
  rd_kafka_conf_set_opaque(*conf, this);
  rd_kafka_conf_set_rebalance_cb(*conf, &RdKafkaMainConsumer::RebalanceCallback);
  absl::StatusOr<HandlePtr> handle = NewHandle(RD_KAFKA_CONSUMER, *conf);
  if (!handle.ok()) {
    init_status_ = handle.status();
    return;
  }
  handle_ = std::move(*handle);
  core_ = std::make_unique<ConsumerCore>(handle_.get(), ConsumerCore::Mode::kGroup, config,
                                         options, clock);
}

RdKafkaMainConsumer::~RdKafkaMainConsumer() { Close(); }

absl::Status RdKafkaMainConsumer::Enter(std::string_view call) const {
  if (closed_) return ClosedError(call);
  if (!init_status_.ok()) return init_status_;
  return absl::OkStatus();
}

void RdKafkaMainConsumer::RebalanceCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                                            rd_kafka_topic_partition_list_t* partitions,
                                            void* opaque) {
  static_cast<RdKafkaMainConsumer*>(opaque)->OnRebalance(err, partitions);
}

void RdKafkaMainConsumer::OnRebalance(rd_kafka_resp_err_t err,
                                      rd_kafka_topic_partition_list_t* partitions) {
  in_callback_ = true;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    Assigned(partitions);
  } else {
    // __REVOKE_PARTITIONS, or a failed rebalance: give up what the list names.
    Revoked(partitions);
  }
  in_callback_ = false;
}

void RdKafkaMainConsumer::Assigned(rd_kafka_topic_partition_list_t* partitions) {
  // librdkafka starts each at the group's committed offset, else auto.offset.reset.
  absl::Status s = ToStatus(rd_kafka_incremental_assign(handle_.get(), partitions), "assign");
  if (!s.ok()) {
    fmt::print(stderr, "restoresim: main consumer: {}\n", s.ToString());
    return;
  }
  core_->Add(PartitionsOf(partitions));
  if (listener_ == nullptr || closing_ || closed_) return;
  listener_->OnPartitionsAssigned(restoresim::Assignment{core_->Assignment(), ""});
}

void RdKafkaMainConsumer::Revoked(rd_kafka_topic_partition_list_t* partitions) {
  const std::vector<TopicPartition> revoked = PartitionsOf(partitions);
  if (listener_ != nullptr && !closing_ && !closed_ && !revoked.empty()) {
    // Still owned during the callback, so it may commit them (not after a loss).
    if (rd_kafka_assignment_lost(handle_.get())) {
      listener_->OnPartitionsLost(revoked);
    } else {
      listener_->OnPartitionsRevoked(revoked);
    }
  }
  core_->Remove(revoked);
  absl::Status s = ToStatus(rd_kafka_incremental_unassign(handle_.get(), partitions), "unassign");
  if (!s.ok()) fmt::print(stderr, "restoresim: main consumer: {}\n", s.ToString());
}

absl::Status RdKafkaMainConsumer::Subscribe(const std::vector<std::string>& topics,
                                            RebalanceListener* listener) {
  if (absl::Status s = Enter("main.subscribe"); !s.ok()) return s;
  if (topics.empty()) return absl::InvalidArgumentError("subscribe: empty topic list");
  if (subscribed_) return absl::FailedPreconditionError("subscribe: already subscribed");
  if (!assignor_name_.empty()) {
    return absl::UnimplementedError(fmt::format(
        "subscribe: librdkafka runs no client-side assignor, so the '{}' assignor (standbys, "
        "warm-ups, probing rebalances) cannot be used against a real broker; use the "
        "broker's default assignment (restoresim.group.assignor=default)", assignor_name_));
  }
  for (const std::string& topic : topics) {
    absl::StatusOr<int32_t> count =
        PartitionCount(handle_.get(), topic, options_.request_timeout_ns);
    if (!count.ok()) return count.status();
  }
  ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())));
  for (const std::string& topic : topics) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  if (absl::Status s = ToStatus(rd_kafka_subscribe(handle_.get(), list.get()), "subscribe");
      !s.ok()) {
    return s;
  }
  listener_ = listener;
  subscribed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<PollResult> RdKafkaMainConsumer::Poll(TimeNs timeout_ns) {
  if (absl::Status s = Enter("main.poll"); !s.ok()) return s;
  if (in_callback_) return absl::FailedPreconditionError("poll: called from a rebalance callback");
  if (!subscribed_) return absl::FailedPreconditionError("poll: the consumer is not subscribed");
  absl::StatusOr<PollResult> result = core_->Poll(timeout_ns, &close_requested_);
  if (close_requested_) {
    CloseNow();
    return ClosedError("poll (closed by a rebalance callback)");
  }
  return result;
}

std::vector<TopicPartition> RdKafkaMainConsumer::Assignment() const {
  return core_ == nullptr || closed_ ? std::vector<TopicPartition>{} : core_->Assignment();
}

absl::Status RdKafkaMainConsumer::Seek(const TopicPartition& partition, int64_t offset) {
  if (absl::Status s = Enter("main.seek"); !s.ok()) return s;
  return core_->Seek(partition, offset);
}

absl::StatusOr<int64_t> RdKafkaMainConsumer::Position(const TopicPartition& partition) {
  if (absl::Status s = Enter("main.position"); !s.ok()) return s;
  return core_->Position(partition);
}

absl::Status RdKafkaMainConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.pause"); !s.ok()) return s;
  return core_->SetPaused(partitions, true);
}

absl::Status RdKafkaMainConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.resume"); !s.ok()) return s;
  return core_->SetPaused(partitions, false);
}

absl::Status RdKafkaMainConsumer::CommitSync(const std::map<TopicPartition, int64_t>& offsets) {
  if (absl::Status s = Enter("main.commit_sync"); !s.ok()) return s;
  if (!subscribed_) return absl::FailedPreconditionError("commit: the consumer is not subscribed");
  if (absl::Status s = core_->CheckCommit(offsets, MemberId()); !s.ok()) return s;
  if (offsets.empty()) return absl::OkStatus();
  const std::vector<std::pair<TopicPartition, int64_t>> entries(offsets.begin(), offsets.end());
  ListPtr list = ToList(entries);
  if (absl::Status s = ToStatus(rd_kafka_commit(handle_.get(), list.get(), 0), "commit");
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ToStatus(list->elems[i].err,
                      fmt::format("commit of {}", PartitionOf(list->elems[i]).ToString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<TopicPartition, int64_t>> RdKafkaMainConsumer::Committed(
    const std::vector<TopicPartition>& partitions) {
  if (absl::Status s = Enter("main.committed"); !s.ok()) return s;
  return core_->Committed(partitions);
}

absl::Status RdKafkaMainConsumer::SetSubscriptionUserData(std::string user_data) {
  if (absl::Status s = Enter("main.set_user_data"); !s.ok()) return s;
  return absl::UnimplementedError(fmt::format(
      "set subscription user data ({} bytes): librdkafka sends no subscription user data of a "
      "custom assignor", user_data.size()));
}

absl::Status RdKafkaMainConsumer::EnforceRebalance() {
  if (absl::Status s = Enter("main.enforce_rebalance"); !s.ok()) return s;
  return absl::UnimplementedError(
      "enforce rebalance: librdkafka has no enforceRebalance (probing rebalances need the "
      "Streams assignor, which librdkafka cannot run)");
}

ConsumerGroupMetadata RdKafkaMainConsumer::GroupMetadata() const {
  ConsumerGroupMetadata metadata{group_, -1, "", ""};
  if (handle_ == nullptr || closed_) return metadata;
  metadata.member_id = MemberId();
  rd_kafka_consumer_group_metadata_t* cgmd = rd_kafka_consumer_group_metadata(handle_.get());
  if (cgmd == nullptr) return metadata;
  void* bytes = nullptr;
  size_t size = 0;
  // On failure `opaque` stays empty and the producer builds metadata from the fields.
  if (rd_kafka_error_t* error = rd_kafka_consumer_group_metadata_write(cgmd, &bytes, &size);
      error != nullptr) {
    rd_kafka_error_destroy(error);
  } else {
    metadata.opaque.assign(static_cast<const char*>(bytes), size);
    rd_kafka_mem_free(handle_.get(), bytes);
  }
  rd_kafka_consumer_group_metadata_destroy(cgmd);
  return metadata;
}

std::string RdKafkaMainConsumer::MemberId() const {
  if (handle_ == nullptr) return "";
  std::string id;
  if (char* member = rd_kafka_memberid(handle_.get()); member != nullptr) {
    id = member;
    rd_kafka_mem_free(handle_.get(), member);
  }
  return id.empty() ? rd_kafka_name(handle_.get()) : id;
}

void RdKafkaMainConsumer::Close() {
  if (closed_) return;
  closed_ = true;
  if (in_callback_) {
    close_requested_ = true;  // librdkafka cannot close from its own callback: Poll finishes it
    return;
  }
  CloseNow();
}

void RdKafkaMainConsumer::CloseNow() {
  closed_ = true;
  if (handle_ == nullptr) return;
  closing_ = true;  // the revocation librdkafka delivers while leaving calls no listener
  absl::Status s = ToStatus(rd_kafka_consumer_close(handle_.get()), "close");
  if (!s.ok()) fmt::print(stderr, "restoresim: main consumer: {}\n", s.ToString());
  core_.reset();
  handle_.reset();
}

}  // namespace restoresim::rdkafka
