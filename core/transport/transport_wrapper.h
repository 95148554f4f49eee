// Transport clients that forward every call to another one (LevelDB's EnvWrapper, and our
// FileSystemWrapper, for the transport port): subclass one and override only the calls a test
// or a decorator changes.
//
//   class RefusingConsumer final : public RestoreConsumerWrapper {
//    public:
//     using RestoreConsumerWrapper::RestoreConsumerWrapper;
//     absl::Status Unassign() override { return absl::PermissionDeniedError("no"); }
//   };
//
// Three hooks make a decorator out of a wrapper without writing each call again:
//   Target()              the client a call goes to (default: the one given at construction);
//                         a wrapper that connects lazily or swaps its client returns the
//                         current one. Called inside the call's scope, on the calling thread.
//   BeginCall/EndCall     around every forwarded call (a gate, a lock, a count); EndCall runs
//                         after the target returned, also for calls that failed.
// An overridden call does not run the hooks unless it calls Forward itself.
//
// Thread-safety: as thread-safe as the target; a wrapper adds no state of its own. The target
// must outlive the wrapper unless the wrapper owns it (the unique_ptr constructors).
#ifndef RESTORESIM_CORE_TRANSPORT_TRANSPORT_WRAPPER_H_
#define RESTORESIM_CORE_TRANSPORT_TRANSPORT_WRAPPER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/transport/transport.h"
#include "core/util/check.h"

namespace restoresim {

// What every client wrapper shares: its target, owned or not, and the call hooks.
template <typename Client>
class ClientForwarder {
 public:
  // A wrapper without a target (nullptr) must override Target().
  explicit ClientForwarder(Client* target) : target_(target) {}
  explicit ClientForwarder(std::unique_ptr<Client> owned)
      : owned_(std::move(owned)), target_(owned_.get()) {
    RS_CHECK(target_ != nullptr, "a client wrapper given no client to own");
  }
  virtual ~ClientForwarder() = default;

 protected:

  virtual Client& Target() {
    RS_CHECK(target_ != nullptr, "a client wrapper without a target forwards a call");
    return *target_;
  }
  virtual void BeginCall() {}
  virtual void EndCall() {}

  // Runs call(Target()) between BeginCall and EndCall.
  template <typename Call>
  decltype(auto) Forward(Call&& call) {
    struct Scope {
      ClientForwarder* self;
      ~Scope() { self->EndCall(); }
    };
    BeginCall();
    Scope scope{this};
    return call(Target());
  }
  // For the interface's const calls: the hooks may change the wrapper (a lazy connection).
  template <typename Call>
  decltype(auto) Forward(Call&& call) const {
    return const_cast<ClientForwarder*>(this)->Forward(std::forward<Call>(call));
  }

 private:
  std::unique_ptr<Client> owned_;
  Client* const target_;
};

class RestoreConsumerWrapper : public RestoreConsumer,
                               protected ClientForwarder<RestoreConsumer> {
 public:
  using ClientForwarder::ClientForwarder;

  absl::Status Assign(const std::vector<TopicPartition>& p) override {
    return Forward([&](RestoreConsumer& c) { return c.Assign(p); });
  }
  absl::Status Unassign() override {
    return Forward([&](RestoreConsumer& c) { return c.Unassign(); });
  }
  std::vector<TopicPartition> Assignment() const override {
    return Forward([&](RestoreConsumer& c) { return c.Assignment(); });
  }
  absl::Status Seek(const TopicPartition& p, int64_t offset) override {
    return Forward([&](RestoreConsumer& c) { return c.Seek(p, offset); });
  }
  absl::Status SeekToBeginning(const std::vector<TopicPartition>& p) override {
    return Forward([&](RestoreConsumer& c) { return c.SeekToBeginning(p); });
  }
  absl::Status SeekToEnd(const std::vector<TopicPartition>& p) override {
    return Forward([&](RestoreConsumer& c) { return c.SeekToEnd(p); });
  }
  absl::StatusOr<int64_t> Position(const TopicPartition& p) override {
    return Forward([&](RestoreConsumer& c) { return c.Position(p); });
  }
  absl::Status Pause(const std::vector<TopicPartition>& p) override {
    return Forward([&](RestoreConsumer& c) { return c.Pause(p); });
  }
  absl::Status Resume(const std::vector<TopicPartition>& p) override {
    return Forward([&](RestoreConsumer& c) { return c.Resume(p); });
  }
  std::vector<TopicPartition> Paused() const override {
    return Forward([&](RestoreConsumer& c) { return c.Paused(); });
  }
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override {
    return Forward([&](RestoreConsumer& c) { return c.Poll(timeout_ns); });
  }
  void Close() override {
    Forward([&](RestoreConsumer& c) { c.Close(); });
  }
};

class MainConsumerWrapper : public MainConsumer, protected ClientForwarder<MainConsumer> {
 public:
  using ClientForwarder::ClientForwarder;

  absl::Status Subscribe(const std::vector<std::string>& topics,
                         RebalanceListener* listener) override {
    return Forward([&](MainConsumer& c) { return c.Subscribe(topics, listener); });
  }
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override {
    return Forward([&](MainConsumer& c) { return c.Poll(timeout_ns); });
  }
  std::vector<TopicPartition> Assignment() const override {
    return Forward([&](MainConsumer& c) { return c.Assignment(); });
  }
  absl::Status Seek(const TopicPartition& p, int64_t offset) override {
    return Forward([&](MainConsumer& c) { return c.Seek(p, offset); });
  }
  absl::StatusOr<int64_t> Position(const TopicPartition& p) override {
    return Forward([&](MainConsumer& c) { return c.Position(p); });
  }
  absl::Status Pause(const std::vector<TopicPartition>& p) override {
    return Forward([&](MainConsumer& c) { return c.Pause(p); });
  }
  absl::Status Resume(const std::vector<TopicPartition>& p) override {
    return Forward([&](MainConsumer& c) { return c.Resume(p); });
  }
  absl::Status CommitSync(const std::map<TopicPartition, int64_t>& offsets) override {
    return Forward([&](MainConsumer& c) { return c.CommitSync(offsets); });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& p) override {
    return Forward([&](MainConsumer& c) { return c.Committed(p); });
  }
  std::string MemberId() const override {
    return Forward([&](MainConsumer& c) { return c.MemberId(); });
  }
  absl::Status SetSubscriptionUserData(std::string user_data) override {
    return Forward(
        [&](MainConsumer& c) { return c.SetSubscriptionUserData(std::move(user_data)); });
  }
  absl::Status EnforceRebalance() override {
    return Forward([&](MainConsumer& c) { return c.EnforceRebalance(); });
  }
  ConsumerGroupMetadata GroupMetadata() const override {
    return Forward([&](MainConsumer& c) { return c.GroupMetadata(); });
  }
  void Close() override {
    Forward([&](MainConsumer& c) { c.Close(); });
  }
};

class AdminWrapper : public Admin, protected ClientForwarder<Admin> {
 public:
  using ClientForwarder::ClientForwarder;

  absl::Status CreateTopic(const std::string& topic, int32_t partitions) override {
    return Forward([&](Admin& a) { return a.CreateTopic(topic, partitions); });
  }
  absl::StatusOr<int32_t> PartitionCount(const std::string& topic) override {
    return Forward([&](Admin& a) { return a.PartitionCount(topic); });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsets(
      const std::vector<TopicPartition>& p) override {
    return Forward([&](Admin& a) { return a.EndOffsets(p); });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsetsFor(
      const std::vector<TopicPartition>& p, IsolationLevel isolation_level) override {
    return Forward([&](Admin& a) { return a.EndOffsetsFor(p, isolation_level); });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> BeginningOffsets(
      const std::vector<TopicPartition>& p) override {
    return Forward([&](Admin& a) { return a.BeginningOffsets(p); });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> CommittedOffsets(
      const std::string& group, const std::vector<TopicPartition>& p) override {
    return Forward([&](Admin& a) { return a.CommittedOffsets(group, p); });
  }
  absl::Status DeleteRecords(const std::map<TopicPartition, int64_t>& before) override {
    return Forward([&](Admin& a) { return a.DeleteRecords(before); });
  }
};

// Producer's calls, for both producer wrappers.
template <typename Base>
class ProducerCalls : public Base, protected ClientForwarder<Base> {
 public:
  using ClientForwarder<Base>::ClientForwarder;

  absl::Status Send(const TopicPartition& p, std::string key, std::optional<std::string> value,
                    int64_t timestamp_ms) override {
    return this->Forward([&](Base& c) {
      return c.Send(p, std::move(key), std::move(value), timestamp_ms);
    });
  }
  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override {
    return this->Forward([&](Base& c) { return c.Flush(timeout_ns); });
  }
  void Close() override {
    this->Forward([&](Base& c) { c.Close(); });
  }
};

class ProducerWrapper : public ProducerCalls<Producer> {
 public:
  using ProducerCalls::ProducerCalls;
};

class TransactionalProducerWrapper : public ProducerCalls<TransactionalProducer> {
 public:
  using ProducerCalls::ProducerCalls;

  absl::Status InitTransactions(TimeNs timeout_ns) override {
    return Forward([&](TransactionalProducer& p) { return p.InitTransactions(timeout_ns); });
  }
  absl::Status BeginTransaction() override {
    return Forward([&](TransactionalProducer& p) { return p.BeginTransaction(); });
  }
  absl::Status SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& offsets,
                                        const ConsumerGroupMetadata& group) override {
    return Forward(
        [&](TransactionalProducer& p) { return p.SendOffsetsToTransaction(offsets, group); });
  }
  absl::Status CommitTransaction(TimeNs timeout_ns) override {
    return Forward([&](TransactionalProducer& p) { return p.CommitTransaction(timeout_ns); });
  }
  absl::Status AbortTransaction(TimeNs timeout_ns) override {
    return Forward([&](TransactionalProducer& p) { return p.AbortTransaction(timeout_ns); });
  }
};

// A Transport that hands out its target's clients; override a factory to wrap them.
class TransportWrapper : public Transport {
 public:
  // REQUIRES: target != nullptr, and it outlives the wrapper.
  explicit TransportWrapper(Transport* target) : target_(target) {
    RS_CHECK(target_ != nullptr, "TransportWrapper needs a target");
  }
  Transport* target() const { return target_; }

  std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) override {
    return target_->NewRestoreConsumer(config);
  }
  std::unique_ptr<MainConsumer> NewMainConsumer(const std::string& group,
                                                const ConsumerConfig& config) override {
    return target_->NewMainConsumer(group, config);
  }
  std::unique_ptr<Admin> NewAdmin(const std::string& client_id) override {
    return target_->NewAdmin(client_id);
  }
  std::unique_ptr<Producer> NewProducer(const std::string& client_id) override {
    return target_->NewProducer(client_id);
  }
  std::unique_ptr<TransactionalProducer> NewTransactionalProducer(
      const TransactionalProducerConfig& config) override {
    return target_->NewTransactionalProducer(config);
  }

 private:
  Transport* const target_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_TRANSPORT_WRAPPER_H_
